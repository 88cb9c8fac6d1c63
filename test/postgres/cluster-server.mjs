// A PostgreSQL cluster of the caller's own (initdb + postgres in a temp dir, a free loopback port):
// the one implementation the tests (test/postgres/cluster.ts, which adds vitest's hooks) and the bench
// (bench/postgres.mjs, plain Node) share. Plain JS with JSDoc so both can import it as it is; its
// declarations are cluster-server.d.mts.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, killNow, killOnExit, stopChild, waitForOutput } from '../servers.mjs';

/** @typedef {import('./cluster-server.d.mts').PostgresCluster} PostgresCluster */
/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/** @typedef {{ uid: number; gid: number } | undefined} RunAs */

/**
 * Debian's PostgreSQL 15, else the newest version installed (what .ci/run's apt gave); `PG_BIN`
 * points at another bin directory. vitest.config.ts imports it (the Postgres files are left out without it).
 * @type {string}
 */
export const PG_BIN = process.env.PG_BIN ?? debianPgBin();
/** @returns {string} */
function debianPgBin() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const version = versions.includes('15') ? '15' : (versions[0] ?? '15');
  return join(root, version, 'bin');
}

/** Every directory made, gone when the process exits (every postmaster too: killOnExit). */
/** @type {Set<string>} */
const directories = new Set();
process.on('exit', () => {
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
});

/**
 * Who runs initdb and the server: initdb refuses root, so as root both run as the `postgres` user
 * (spawn's uid/gid, the same as `runuser -u postgres --`, but the postmaster stays our own child,
 * so a SIGKILL reaches it and not a wrapper).
 * @returns {RunAs}
 */
function runAs() {
  if (process.getuid?.() !== 0) return undefined;
  /** @param {string} flag */
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Makes the data directory with initdb (trust auth, no sync: a test's cluster need not survive a power cut).
 * @param {string} dir @param {RunAs} user @returns {string}
 */
function initdb(dir, user) {
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  execFileSync(
    join(PG_BIN, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}), cwd: dir },
  );
  return data;
}

/**
 * Starts the postmaster; rejects with its output when it is not ready within 15 s.
 * @param {string} dir @param {string} data @param {number} port @param {RunAs} user
 * @returns {Promise<ChildProcess>}
 */
async function startServer(dir, data, port, user) {
  const child = spawn(
    join(PG_BIN, 'postgres'),
    [
      ...['-D', data, '-p', String(port), '-k', dir],
      // fsync off: a SIGKILLed server keeps what it committed (the OS has it), a power cut would not
      // matter here. synchronous_commit stays on: without it a kill loses the last commits.
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
      ...['-c', 'full_page_writes=off', '-c', 'max_connections=300', '-c', 'shared_buffers=32MB'],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...(user ?? {}) },
  );
  killOnExit(child);
  await waitForOutput(child, {
    name: `postgres on port ${port}`,
    ready: /database system is ready to accept connections/,
    ms: 15_000,
  });
  // Keep reading: a full pipe would block the server's logging.
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/**
 * Starts the server, retrying for a while: after a SIGKILL its old backends may still hold the shared memory.
 * @param {string} dir @param {string} data @param {number} port @param {RunAs} user
 * @returns {Promise<ChildProcess>}
 */
async function startRetrying(dir, data, port, user) {
  /** @type {unknown} */
  let lastError;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      return await startServer(dir, data, port, user);
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw lastError;
}

/**
 * Starts a PostgreSQL cluster of the caller's own. Fails when the binaries are missing: the tests
 * are the only proof that `billing-sdk/postgres` works. (Outside CI, vitest.config.ts leaves these
 * files out with the reason printed.)
 * @returns {Promise<PostgresCluster>}
 */
export async function startPostgres() {
  if (!existsSync(join(PG_BIN, 'initdb'))) {
    throw new Error(
      `PostgreSQL not found in ${PG_BIN}: install it (apt-get install postgresql) or set PG_BIN`,
    );
  }
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-pg-'));
  directories.add(dir);
  const data = initdb(dir, user);
  // Another process may take the free port before the server binds it: try a fresh one.
  let port = 0;
  /** @type {ChildProcess | undefined} */
  let child;
  for (let attempt = 0; attempt < 3 && !child; attempt++) {
    port = await freePort();
    child = await startServer(dir, data, port, user).catch((error) => {
      if (attempt === 2) throw error;
      return undefined;
    });
  }
  let current = /** @type {ChildProcess} */ (child);
  // SIGINT: fast shutdown, clients are cut off, nothing waits for them.
  const stopServer = () => stopChild(current, 'SIGINT', 5_000);
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await stopServer();
      rmSync(dir, { recursive: true, force: true });
      directories.delete(dir);
    },
    kill: () => killNow(current),
    async restart() {
      await stopServer();
      current = await startRetrying(dir, data, port, user);
    },
  };
}
