// What every server harness of the tests needs (test/redis/redis-server.ts, replica-server.ts,
// cluster.ts, test/postgres/cluster-server.mjs): a free loopback port, a child's exit awaited, a
// child killed or stopped, and no orphan left when the worker exits. Plain JS with JSDoc, since
// cluster-server.mjs (shared with the bench) imports it as it is; its declarations are servers.d.mts.
import { createServer } from 'node:net';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */

/** @returns {Promise<number>} */
export function freePort() {
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

/** @param {ChildProcess} child @returns {Promise<void>} */
export function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Every server child still running, killed when the process exits however it exits: no orphans. */
/** @type {Set<ChildProcess>} */
const running = new Set();
process.on('exit', () => {
  // SIGKILL ends a stopped (SIGSTOPped) child too.
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Has `child` killed when the process exits (while it still runs); returns it.
 * @template {ChildProcess} T @param {T} child @returns {T}
 */
export function killOnExit(child) {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Kills `child` at once (SIGKILL: a crash, nothing flushed); resolves once it exited.
 * @param {ChildProcess} child @returns {Promise<void>}
 */
export async function killNow(child) {
  const done = exited(child);
  child.kill('SIGKILL');
  await done;
}

/**
 * Sends `signal`, then SIGKILL when the child has not exited within `graceMs`; resolves once it exited.
 * @param {ChildProcess} child @param {NodeJS.Signals} signal @param {number} graceMs @returns {Promise<void>}
 */
export async function stopChild(child, signal, graceMs) {
  const done = exited(child);
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}

/**
 * Resolves once the child's output (stdout and stderr) matches `ready`; rejects (and kills the child)
 * when it exits first, fails to spawn, or `ms` pass, with `<name> did not start: <why>` and the output.
 * @param {ChildProcess} child
 * @param {{ name: string; ready: RegExp; ms: number; waitingFor?: string }} options
 * @returns {Promise<void>}
 */
export function waitForOutput(child, { name, ready, ms, waitingFor = 'ready' }) {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`not ${waitingFor} within ${ms / 1000} s`)), ms);
    /** @param {Error} error */
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start: ${error.message}\n${output}`));
    };
    /** @param {number | null} code @param {string | null} signal */
    const failed = (code, signal) => fail(new Error(`exited (${code ?? signal})`));
    /** @param {Buffer} chunk */
    const read = (chunk) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        child.removeListener('exit', failed);
        child.removeListener('error', fail);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('error', fail);
    child.once('exit', failed);
  });
}
