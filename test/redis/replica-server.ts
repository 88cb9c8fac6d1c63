import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';

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

/** Every replica still running, killed when the worker exits however it exits: no orphans. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
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
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--replicaof',
      '127.0.0.1',
      String(masterPort),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  child.once('exit', () => {
    running.delete(child);
    rmSync(dir, { recursive: true, force: true });
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('not in sync within 10 s')), 10_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`replica on port ${port} did not start: ${error.message}\n${output}`));
    };
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (/sync: Finished with success|Successful partial resynchronization/.test(output)) {
        clearTimeout(timer);
        child.removeListener('exit', failed);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('error', fail);
    const failed = (code: number | null, signal: string | null) =>
      fail(new Error(`exited (${code ?? signal})`));
    child.once('exit', failed);
  });
  return {
    port,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await done;
    },
  };
}
