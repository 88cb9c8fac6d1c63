#!/usr/bin/env node
/**
 * `billing-sdk-mock`: the mock server as a standalone process, for tests in other languages and
 * in other processes (e.g. Playwright's `webServer`). Process wiring only: arguments are parsed by
 * `cli/args.ts`, the server is `startMockServer`, the output is formatted by `cli/banner.ts`.
 */
import { VERSION } from '../version.js';
import { parseCliArgs, USAGE } from './cli/args.js';
import { formatHuman, formatJson, startupInfo } from './cli/banner.js';
import { startMockServer } from './server.js';
import type { MockServer } from './types.js';

/** How long a shutdown may take before the process exits anyway. */
const CLOSE_TIMEOUT_MS = 3000;

function fail(message: string, code: number): never {
  process.stderr.write(`billing-sdk-mock: ${message}\n`);
  process.exit(code);
}

/** One line for a failed listen, by its system error code. */
function listenError(error: unknown, host: string, port: number): string {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return `port ${port} is already in use on ${host} (use another --port, or 0)`;
  if (code === 'EACCES') return `no permission to listen on ${where} (ports below 1024 need privileges)`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return `cannot listen on ${where}: no such local address (${String(code)})`;
  }
  return `cannot listen on ${where}: ${error instanceof Error ? error.message : String(error)}`;
}

function stopOnSignals(server: MockServer): void {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), CLOSE_TIMEOUT_MS).unref();
    server.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

async function main(): Promise<void> {
  const command = parseCliArgs(process.argv.slice(2));
  if (command.kind === 'help') return void process.stdout.write(`${USAGE}\n`);
  if (command.kind === 'version') return void process.stdout.write(`${VERSION}\n`);
  if (command.kind === 'error') {
    process.stderr.write(`billing-sdk-mock: ${command.message}\nRun billing-sdk-mock --help for usage.\n`);
    process.exitCode = 2;
    return;
  }
  const { options } = command;
  let server: MockServer;
  try {
    server = await startMockServer({
      port: options.port,
      host: options.host,
      seed: options.seed,
      apiKey: options.apiKey,
      signingKey: options.signingKey,
      webhookUrl: options.webhookUrl,
    });
  } catch (error) {
    fail(listenError(error, options.host, options.port), 1);
  }
  stopOnSignals(server);
  const info = startupInfo(server, options.webhookUrl, process.pid);
  process.stdout.write(options.json ? formatJson(info) : formatHuman(info, VERSION, options.seed));
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error), 1));
