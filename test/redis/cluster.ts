import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { keySlot } from '../../src/redis/keys.js';
import { freePort, killNow, killOnExit } from '../servers.mjs';

/**
 * A Redis Cluster of the test's own: 3 masters and 3 replicas of Debian's redis-server on free
 * loopback ports, each node in a temp dir, nothing persisted (`appendonly no`, `save ""`), created
 * with `redis-cli --cluster create … --cluster-replicas 1`. `cluster-node-timeout` is short (1 s)
 * so a killed master's replica is promoted within a few seconds.
 */

/** The binary CI installs (Debian's redis-server); `REDIS_SERVER` points elsewhere. */
const BINARY = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
/** redis-cli beside the server (Debian ships both in redis-tools/redis-server); `REDIS_CLI` points elsewhere. */
const CLI = process.env.REDIS_CLI ?? join(dirname(BINARY), 'redis-cli');
/** How long a node may be unreachable before the others count it failed, in ms. */
export const NODE_TIMEOUT_MS = 1_000;

/** One node as the cluster saw it when it was created. */
export interface ClusterNode {
  port: number;
  pid: number;
  /** Its role when the cluster was made: a failover swaps a master and its replica. */
  role: 'master' | 'replica';
}

/** A running cluster. */
export interface RedisCluster {
  /** Every node, as created (3 masters first, then 3 replicas). */
  readonly nodes: readonly ClusterNode[];
  /** The masters, as clients want their seed list. */
  readonly rootNodes: readonly { host: string; port: number }[];
  /** The port of the master serving a slot (a number) or a key's slot (a string), asked of a live node now. */
  masterOf(slotOrKey: number | string): Promise<number>;
  /** The ports of the replicas of the master on `port`, asked of a live node now. */
  replicasOf(port: number): Promise<number[]>;
  /** Kills a node at once (SIGKILL: nothing flushed, no goodbye); resolves once it exited. */
  kill(port: number): Promise<void>;
  /** Starts a killed node again with its old identity (nodes.conf): it rejoins, as a replica of whoever took over. */
  restart(port: number): Promise<void>;
  /**
   * Resolves once every live node says `cluster_state:ok` and agrees on 3 live masters serving all
   * slots and on every other live node being a replica of one of them, and every live replica's
   * link to its master is up.
   */
  waitHealthy(ms?: number): Promise<void>;
  /** Runs redis-cli against a node (`CLUSTER`, `INFO`, `DEBUG` …): its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** Ends every node and removes the temp dir. */
  stop(): Promise<void>;
}

function cli(port: number, args: string[], ms = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      CLI,
      ['-h', '127.0.0.1', '-p', String(port), ...args],
      { timeout: ms },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`redis-cli -p ${port} ${args.join(' ')}: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One node's process, started in its own dir (its log in `redis.log` there); resolves once it answers PING. */
async function startNode(dir: string, port: number, busPort: number): Promise<ChildProcess> {
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    BINARY,
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
async function clusterNodes(port: number) {
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

/** Starts a cluster; rejects (and leaves no process behind) when it does not come up healthy in 30 s. */
export async function startCluster(): Promise<RedisCluster> {
  if (!existsSync(BINARY) || !existsSync(CLI)) {
    throw new Error(
      `redis-server/redis-cli not found at ${BINARY} / ${CLI}: install redis-server or set REDIS_SERVER (and REDIS_CLI)`,
    );
  }
  const root = mkdtempSync(join(tmpdir(), 'billing-sdk-cluster-'));
  const procs = new Map<number, { child: ChildProcess; dir: string; busPort: number }>();
  const ports: number[] = [];
  const stop = async () => {
    await Promise.all([...procs.values()].map(({ child }) => killNow(child)));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // Twelve distinct free ports (a port and a bus port per node).
    const free = new Set<number>();
    while (free.size < 12) free.add(await freePort());
    const list = [...free];
    for (let i = 0; i < 6; i++) {
      const port = list[2 * i]!;
      const busPort = list[2 * i + 1]!;
      const dir = join(root, String(port));
      procs.set(port, { child: await startNode(dir, port, busPort), dir, busPort });
      ports.push(port);
    }
    await cli(
      ports[0]!,
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
    const view = await clusterNodes(ports[0]!);
    const nodes = ports
      .map(
        (port): ClusterNode => ({
          port,
          pid: procs.get(port)?.child.pid ?? 0,
          role: view.find((n) => n.port === port)?.master ? 'master' : 'replica',
        }),
      )
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

function makeCluster(
  ports: number[],
  procs: Map<number, { child: ChildProcess; dir: string; busPort: number }>,
  stop: () => Promise<void>,
): RedisCluster {
  const alive = () =>
    ports.filter((p) => {
      const child = procs.get(p)?.child;
      return child && child.exitCode === null && child.signalCode === null;
    });
  const anyAlive = () => {
    const port = alive()[0];
    if (port === undefined) throw new Error('no cluster node is running');
    return port;
  };
  const cluster: RedisCluster = {
    nodes: [],
    rootNodes: [],
    async masterOf(slotOrKey) {
      const slot = typeof slotOrKey === 'number' ? slotOrKey : keySlot(slotOrKey);
      for (const node of await clusterNodes(anyAlive())) {
        if (!node.master || node.failed) continue;
        for (const range of node.slots) {
          const [from, to = from] = range.split('-').map(Number);
          if (from !== undefined && to !== undefined && slot >= from && slot <= to) return node.port;
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
          // Three masters serve the slots in every live node's view, none of them a killed node.
          // And every other live node is, in every view, a replica of one of them: a node restarted a
          // moment ago is known as a replica by some nodes before others (a test asking one node for
          // a master's replicas must not find none).
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
          // Every live replica has its copy of its master (a replica never synced cannot take over).
          const replicas = views[0]?.filter((n) => !n.master && live.includes(n.port)) ?? [];
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
        if (Date.now() > deadline) throw new Error(`cluster not healthy within ${ms} ms:\n${last}`);
        await sleep(100);
      }
    },
    cli: (port, ...args) => cli(port, args),
    stop,
  };
  return cluster;
}

/** One cluster for the file: started before the first test, stopped after the last. */
export function useCluster(): { readonly cluster: RedisCluster } {
  const ref = {} as { cluster: RedisCluster };
  beforeAll(async () => {
    ref.cluster = await startCluster();
  }, 90_000);
  afterAll(() => ref.cluster?.stop());
  return ref;
}
