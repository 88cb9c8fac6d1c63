import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * Bundles a child entry (test/redis/*-process.ts) with the SDK's sources into one .mjs in a temp
 * dir, rather than importing dist/, which other work may be rebuilding meanwhile. Returns its path
 * and a cleanup.
 */
export async function buildChild(entry: string): Promise<{ file: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-redis-'));
  const file = join(dir, 'child.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    // The Node builds ship classic zod in place of zod/mini, as vitest.config.ts and tsup do.
    alias: { 'zod/mini': 'zod' },
    // node-redis is CommonJS: its require() of Node built-ins needs a real require in an ES module.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A line a child printed: one JSON object per line. */
export type Message = Record<string, unknown> & { type: string };

/** A child process speaking JSON lines on stdout. */
export interface Child {
  messages: Message[];
  /** Resolves with the first message (already printed or to come) that `match` accepts. */
  next(match: (message: Message) => boolean, ms?: number): Promise<Message>;
  send(line: string): void;
  kill(signal?: NodeJS.Signals): Promise<void>;
  process: ChildProcess;
}

const children = new Set<ChildProcess>();
// However the test worker ends, no child outlives it.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts `node file` with `env` added; its stderr is kept for the error of a failed `next`. */
export function spawnChild(file: string, env: Record<string, string>): Child {
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const messages: Message[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.startsWith('{')) messages.push(JSON.parse(line) as Message);
      newline = buffer.indexOf('\n');
    }
    for (const wake of waiters) wake();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.once('exit', () => {
    for (const wake of waiters) wake();
  });
  return {
    messages,
    process: child,
    next(match, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = messages.find(match);
          if (found) {
            done();
            resolve(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            done();
            reject(new Error(`child exited (${child.exitCode ?? child.signalCode}) first:\n${stderr}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no matching message within ${ms} ms:\n${JSON.stringify(messages)}\n${stderr}`));
        }, ms);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    send(line) {
      child.stdin?.write(`${line}\n`);
    },
    kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      return exited;
    },
  };
}
