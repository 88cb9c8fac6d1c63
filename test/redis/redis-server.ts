import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { freePort, killNow, killOnExit, stopChild, waitForOutput } from '../servers.mjs';

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

/** Starts one server; rejects with its output when it does not become ready within 5 s. */
async function startOnce(port: number): Promise<RedisServer> {
  const child = killOnExit(
    spawn(BINARY, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  await waitForOutput(child, {
    name: `redis-server on port ${port}`,
    ready: /Ready to accept connections/,
    ms: 5_000,
  });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () => stopChild(child, 'SIGTERM', 2_000),
    kill: () => killNow(child),
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
