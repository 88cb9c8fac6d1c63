import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/** The binary CI installs (Debian's redis-server); `REDIS_SERVER` points elsewhere. */
const BINARY = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** A redis-server of the test's own, on a free loopback port, with nothing persisted. */
export interface RedisServer {
  port: number;
  url: string;
  /** Ends the server (SIGKILL if SIGTERM is not enough); resolves once it exited. */
  stop(): Promise<void>;
  /** Kills the server at once (SIGKILL: a crash, nothing flushed, no goodbye to clients); resolves once it exited. */
  kill(): Promise<void>;
}

/** Every server still running, killed when the worker exits however it exits: no orphans. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts one server; rejects with its output when it does not become ready within 5 s. */
async function startOnce(port: number): Promise<RedisServer> {
  const child = spawn(
    BINARY,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('not ready within 5 s')), 5_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} did not start: ${error.message}\n${output}`));
    };
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`exited (${code ?? signal})`)));
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      const done = exited(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
      await done;
      clearTimeout(timer);
    },
    async kill() {
      const done = exited(child);
      child.kill('SIGKILL');
      await done;
    },
  };
}

/**
 * Starts a redis-server. Fails when the binary is missing: these tests are the only proof that the
 * Redis stores work. (Outside CI, vitest.config.ts leaves these files out with the reason printed.)
 */
export async function startRedisServer(): Promise<RedisServer> {
  if (!existsSync(BINARY)) {
    throw new Error(
      `redis-server not found at ${BINARY}: install it (apt-get install redis-server) or set REDIS_SERVER`,
    );
  }
  // Another process may take the free port before redis binds it: try a fresh one.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(await freePort());
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** One redis-server for the file: started before the first test, stopped after the last. */
export function useRedisServer(): { readonly server: RedisServer } {
  const ref = {} as { server: RedisServer };
  beforeAll(async () => {
    ref.server = await startRedisServer();
  });
  afterAll(() => ref.server?.stop());
  return ref;
}
