import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killNow, killOnExit, stopChild, waitForOutput } from '../../scripts/servers.mjs';
import { startRedisServer } from './redis-server.js';

// A redis-server that can be stopped, frozen and started again on the same port, which the
// shared helper (a fresh port per server) does not offer: clients then reconnect to the same URL,
// as they do when a production Redis restarts.

const BINARY = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

export interface RestartableRedis {
  url: string;
  /** The running server's process id (for SIGSTOP / SIGCONT). */
  readonly pid: number;
  /** Ends the server (SIGTERM; an append-only file is flushed first); resolves once it exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port (and directory: with `persist`, the data is back). */
  start(): Promise<void>;
  /** Sends `signal` (SIGKILL: dies at once, nothing flushed); resolves once it exited. */
  kill(signal: 'SIGKILL'): Promise<void>;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

/**
 * Starts a redis-server on a free port. With `persist`, every write goes to an append-only file
 * (fsynced on each write), so a restart keeps the data; without, a restart loses it, like a Redis
 * without persistence or a failover to an empty replica.
 */
export async function startRestartableRedis(persist: boolean): Promise<RestartableRedis> {
  // The shared helper finds a free port and proves the binary runs; its server is then let go.
  const probe = await startRedisServer();
  const port = probe.port;
  await probe.stop();
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-access-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--dir',
    dir,
    '--appendonly',
    persist ? 'yes' : 'no',
    '--appendfsync',
    'always',
  ];
  let child: ChildProcess | undefined;

  const start = async () => {
    child = killOnExit(spawn(BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    await waitForOutput(child, {
      name: `redis-server on port ${port}`,
      ready: /Ready to accept connections/,
      ms: 5_000,
    });
  };
  const stop = async () => {
    if (!child) return;
    // A frozen server would never act on SIGTERM.
    child.kill('SIGCONT');
    await stopChild(child, 'SIGTERM', 3_000);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid ?? 0;
    },
    stop,
    start,
    async kill() {
      if (child) await killNow(child);
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
