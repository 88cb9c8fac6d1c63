// Starting the servers the tests and the bench run against: a redis-server, a replica of one, a Redis
// Cluster (3 masters, 3 replicas) and a PostgreSQL cluster, each on free loopback ports, in temp dirs,
// with no orphan left when the process exits. Plain JS with JSDoc so that vitest (test/redis/*.ts and
// test/postgres/cluster.ts add its hooks) and the bench (plain Node) import the same file as it is;
// its declarations are servers.d.mts.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import calculateSlot from 'cluster-key-slot';

/** @typedef {import('node:child_process').ChildProcess} ChildProcess */
/** @typedef {import('./servers.d.mts').RedisServer} RedisServer */
/** @typedef {import('./servers.d.mts').ReplicaServer} ReplicaServer */
/** @typedef {import('./servers.d.mts').RedisCluster} RedisCluster */
/** @typedef {import('./servers.d.mts').PostgresCluster} PostgresCluster */

// ---- child processes -------------------------------------------------------------------------------
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

/**
 * `start` on free ports, tried again on fresh ones when it fails: a port found free may be taken
 * (by another server, or as a connection's local port) before the server binds it.
 * @template T @param {() => Promise<T>} start @returns {Promise<T>}
 */
async function onFreePorts(start) {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await start();
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
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
 * Kills `child` and the processes it forked (a server's workers) at once; resolves once `child` exited.
 * @param {ChildProcess} child @returns {Promise<void>}
 */
async function killWithChildren(child) {
  let forked = [];
  try {
    forked = execFileSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    // pgrep exits 1 when there is none.
  }
  const done = killNow(child);
  for (const pid of forked) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
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

// ---- redis-server and its replica --------------------------------------------------------------------

/** The binary CI installs (Debian's redis-server); `REDIS_SERVER` points elsewhere. */
const REDIS_BINARY = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
/** redis-cli beside the server (Debian ships both); `REDIS_CLI` points elsewhere. */
const REDIS_CLI = process.env.REDIS_CLI ?? join(dirname(REDIS_BINARY), 'redis-cli');
/** One attempt on `port`. @param {number} port @returns {Promise<RedisServer>} */
async function startOnce(port) {
  const child = killOnExit(
    spawn(REDIS_BINARY, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
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
 * Starts a redis-server on a free loopback port (nothing persisted). Fails when the binary is missing.
 * @returns {Promise<RedisServer>}
 */
export async function startRedisServer() {
  if (!existsSync(REDIS_BINARY)) {
    throw new Error(
      `redis-server not found at ${REDIS_BINARY}: install it (apt-get install redis-server) or set REDIS_SERVER`,
    );
  }
  return onFreePorts(async () => startOnce(await freePort()));
}
/**
 * Starts `redis-server --replicaof 127.0.0.1 <masterPort>` and resolves once its first sync with the
 * master finished; rejects with its output when that takes more than 10 s.
 * @param {number} masterPort @returns {Promise<ReplicaServer>}
 */
export async function startReplica(masterPort) {
  const port = await freePort();
  // Its own dir: a replica writes the master's RDB to disk on a full sync.
  const dir = mkdtempSync(`${tmpdir()}/billing-sdk-replica-`);
  const child = spawn(
    REDIS_BINARY,
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

// ---- Redis Cluster -----------------------------------------------------------------------------------

/** How long a node may be unreachable before the others count it failed, in ms: short, so a failover takes seconds. */
export const NODE_TIMEOUT_MS = 1_000;
/** Runs redis-cli against a node; its output. */
function cli(port, args, ms = 10_000) {
  return new Promise((resolve, reject) => {
    execFile(
      REDIS_CLI,
      ['-h', '127.0.0.1', '-p', String(port), ...args],
      { timeout: ms },
      (error, stdout, stderr) => {
        if (error)
          reject(
            new Error(`redis-cli -p ${port} ${args.join(' ')}: ${error.message}
${stderr}`),
          );
        else resolve(stdout);
      },
    );
  });
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** One cluster node's process in its own dir (its log in `redis.log` there); resolves once it answers PING. */
async function startNode(dir, port, busPort) {
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    REDIS_BINARY,
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--logfile', join(dir, 'redis.log')],
      ...['--cluster-enabled', 'yes', '--cluster-port', String(busPort)],
      ...['--cluster-config-file', join(dir, 'nodes.conf')],
      ...['--cluster-node-timeout', String(NODE_TIMEOUT_MS)],
      // A replica may always take over, however long its master has been gone (the test decides when).
      ...['--cluster-replica-validity-factor', '0'],
      ...['--save', '', '--appendonly', 'no'],
    ],
    { stdio: 'ignore' },
  );
  killOnExit(child);
  const deadline = Date.now() + 5_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `redis-server (cluster node) on port ${port} exited (${child.exitCode ?? child.signalCode})`,
      );
    }
    try {
      if ((await cli(port, ['PING'], 1_000)).includes('PONG')) return child;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server (cluster node) on port ${port} did not answer within 5 s`);
    }
    await sleep(20);
  }
}
/** `CLUSTER NODES` parsed: each node's port, id, whether it is a live master, and its master's id. */
async function clusterNodes(port) {
  const text = await cli(port, ['CLUSTER', 'NODES']);
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id = '', address = '', flags = '', master = '', , , , , ...slots] = line.split(' ');
      return {
        id,
        port: Number(/:(\d+)@/.exec(address)?.[1]),
        master: flags.includes('master'),
        failed: flags.includes('fail'),
        masterId: master,
        slots,
      };
    });
}
/**
 * Starts a Redis Cluster: 3 masters and 3 replicas (`redis-cli --cluster create … --cluster-replicas 1`),
 * each node in a temp dir; rejects (and leaves no process behind) when it is not healthy in 30 s.
 * @returns {Promise<RedisCluster>}
 */
export async function startCluster() {
  if (!existsSync(REDIS_BINARY) || !existsSync(REDIS_CLI)) {
    throw new Error(
      `redis-server/redis-cli not found at ${REDIS_BINARY} / ${REDIS_CLI}: install redis-server or set REDIS_SERVER (and REDIS_CLI)`,
    );
  }
  const root = mkdtempSync(join(tmpdir(), 'billing-sdk-cluster-'));
  const procs = new Map();
  const ports = [];
  const stop = async () => {
    await Promise.all([...procs.values()].map(({ child }) => killNow(child)));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // A port and a bus port per node, distinct, each pair found just before its node starts.
    const taken = new Set();
    const fresh = async () => {
      let port = await freePort();
      while (taken.has(port)) port = await freePort();
      taken.add(port);
      return port;
    };
    for (let i = 0; i < 6; i++) {
      const node = await onFreePorts(async () => {
        const port = await fresh();
        const busPort = await fresh();
        const dir = join(root, String(port));
        return { port, busPort, dir, child: await startNode(dir, port, busPort) };
      });
      procs.set(node.port, { child: node.child, dir: node.dir, busPort: node.busPort });
      ports.push(node.port);
    }
    await cli(
      ports[0],
      [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      60_000,
    );
    const cluster = makeCluster(ports, procs, stop);
    await cluster.waitHealthy(30_000);
    // Roles as created, read back once the cluster is up (redis-cli chose which node replicates which).
    const view = await clusterNodes(ports[0]);
    const nodes = ports
      .map((port) => ({
        port,
        pid: procs.get(port)?.child.pid ?? 0,
        role: view.find((n) => n.port === port)?.master ? 'master' : 'replica',
      }))
      .sort((a, b) => (a.role === b.role ? 0 : a.role === 'master' ? -1 : 1));
    const rootNodes = nodes
      .filter((n) => n.role === 'master')
      .map((n) => ({ host: '127.0.0.1', port: n.port }));
    return { ...cluster, nodes, rootNodes };
  } catch (error) {
    await stop();
    throw error;
  }
}
function makeCluster(ports, procs, stop) {
  const alive = () =>
    ports.filter((p) => {
      const child = procs.get(p)?.child;
      return child && child.exitCode === null && child.signalCode === null;
    });
  const anyAlive = () => {
    const port = alive()[0];
    if (port === void 0) throw new Error('no cluster node is running');
    return port;
  };
  const cluster = {
    nodes: [],
    rootNodes: [],
    async masterOf(slotOrKey) {
      const slot = typeof slotOrKey === 'number' ? slotOrKey : calculateSlot(slotOrKey);
      for (const node of await clusterNodes(anyAlive())) {
        if (!node.master || node.failed) continue;
        for (const range of node.slots) {
          const [from, to = from] = range.split('-').map(Number);
          if (from !== void 0 && to !== void 0 && slot >= from && slot <= to) return node.port;
        }
      }
      throw new Error(`no live master serves slot ${slot}`);
    },
    async replicasOf(port) {
      const all = await clusterNodes(anyAlive());
      const master = all.find((n) => n.port === port);
      return all.filter((n) => master && n.masterId === master.id).map((n) => n.port);
    },
    async kill(port) {
      const child = procs.get(port)?.child;
      if (!child) throw new Error(`no cluster node on port ${port}`);
      await killNow(child);
    },
    async restart(port) {
      const proc = procs.get(port);
      if (!proc) throw new Error(`no cluster node on port ${port}`);
      if (alive().includes(port)) throw new Error(`node ${port} is running`);
      proc.child = await startNode(proc.dir, port, proc.busPort);
    },
    async waitHealthy(ms = 20_000) {
      const deadline = Date.now() + ms;
      let last = '';
      for (;;) {
        try {
          const live = alive();
          const infos = await Promise.all(live.map((p) => cli(p, ['CLUSTER', 'INFO'], 2_000)));
          const views = await Promise.all(live.map((p) => clusterNodes(p)));
          const ok = infos.every((info) => info.includes('cluster_state:ok'));
          // Three masters serve the slots in every live node's view, none of them a killed node. And
          // every other live node is, in every view, a replica of one of them: a node restarted a
          // moment ago is known as a replica by some nodes before others.
          const agreed = views.every((view) => {
            const serving = view.filter((n) => n.master && !n.failed && n.slots.length > 0);
            const ids = new Set(serving.map((n) => n.id));
            const replicasKnown = live
              .filter((port) => !serving.some((n) => n.port === port))
              .every((port) =>
                view.some((n) => n.port === port && !n.master && !n.failed && ids.has(n.masterId)),
              );
            return serving.length === 3 && serving.every((n) => live.includes(n.port)) && replicasKnown;
          });
          const replicas = views[0]?.filter((n) => !n.master && live.includes(n.port)) ?? [];
          // Every live replica has its copy of its master (a replica never synced cannot take over).
          const synced = await Promise.all(
            replicas.map(async (n) =>
              (await cli(n.port, ['INFO', 'replication'], 2_000)).includes('master_link_status:up'),
            ),
          );
          if (ok && agreed && synced.every(Boolean)) return;
          last = infos.join('\n');
        } catch (error) {
          last = String(error);
        }
        if (Date.now() > deadline)
          throw new Error(`cluster not healthy within ${ms} ms:
${last}`);
        await sleep(100);
      }
    },
    cli: (port, ...args) => cli(port, args),
    stop,
  };
  return cluster;
}

// ---- PostgreSQL --------------------------------------------------------------------------------------
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
    // The backends too: killed alone, the postmaster leaves them serving their connections until they
    // notice it is gone, so a query sent right after the "crash" could still be answered.
    kill: () => killWithChildren(current),
    async restart() {
      await stopServer();
      current = await startRetrying(dir, data, port, user);
    },
  };
}
