import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { freePort, killNow, killOnExit, waitForOutput } from '../servers.mjs';

/** The binary CI installs (Debian's redis-server); `REDIS_SERVER` points elsewhere. */
const BINARY = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** A replica of a test's redis-server, on a free loopback port, with nothing persisted. */
export interface ReplicaServer {
  port: number;
  /** Freezes the replica (SIGSTOP): connected still, but it acknowledges nothing until {@link resume}. */
  pause(): void;
  /** Thaws a paused replica (SIGCONT). */
  resume(): void;
  /** Kills the replica (SIGKILL); resolves once it exited. */
  kill(): Promise<void>;
}

/**
 * Starts `redis-server --replicaof 127.0.0.1 <masterPort>` and resolves once its first sync with
 * the master finished; rejects with its output when that takes more than 10 s.
 */
export async function startReplica(masterPort: number): Promise<ReplicaServer> {
  const port = await freePort();
  // Its own dir: a replica writes the master's RDB to disk on a full sync.
  const dir = mkdtempSync(`${tmpdir()}/billing-sdk-replica-`);
  const child = spawn(
    BINARY,
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...['--dir', dir, '--replicaof', '127.0.0.1', String(masterPort)],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  killOnExit(child).once('exit', () => rmSync(dir, { recursive: true, force: true }));
  await waitForOutput(child, {
    name: `replica on port ${port}`,
    ready: /sync: Finished with success|Successful partial resynchronization/,
    ms: 10_000,
    waitingFor: 'in sync',
  });
  return {
    port,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    kill() {
      child.kill('SIGCONT'); // a paused replica dies at once all the same
      return killNow(child);
    },
  };
}
