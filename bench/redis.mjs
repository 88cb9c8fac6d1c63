// billing-sdk/redis on one redis-server and on a Redis Cluster (3 masters, 3 replicas), through the
// four clients it takes as they are (ioredis Redis/Cluster, node-redis createClient/createCluster):
// an access lookup that reads the store, a dedupe claim, a spool append, 16 in flight (tinybench);
// then what `waitReplicas: 1` adds to an append, one at a time, on a master with one replica.
import { BillingClient, createAccessCache } from 'billing-sdk';
import { redisAccessStore, redisDedupeStore, redisSpool } from 'billing-sdk/redis';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { startCluster, startRedisServer, startReplica } from '../scripts/servers.mjs';
import { goal, r3, startMock, timeTasks } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Redis: one node vs a cluster';
export const how =
  "Servers started by `scripts/servers.mjs` (the tests' starters). On each of the four clients: an access lookup that misses memory and reads the store (1 ms ttl, 500 accounts in turn), a dedupe `claim` of a fresh id, a spool `append` of one event; tinybench with 16 in flight, 1 s each. Then appends one at a time on a master with one replica, without and with `waitReplicas: 1`. No goal is set for these figures.";

const ACCOUNTS = 500;

async function clientsOf(kind, target) {
  if (kind === 'ioredis') {
    const client = target.cluster ? new Cluster(target.cluster) : new Redis(target.port, '127.0.0.1');
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: () => client.disconnect() };
  }
  const client = target.cluster
    ? createCluster({ rootNodes: target.cluster.map((n) => ({ url: `redis://127.0.0.1:${n.port}` })) })
    : createClient({ url: `redis://127.0.0.1:${target.port}` });
  client.on('error', () => {});
  await client.connect();
  return { client, close: () => client.close?.() ?? client.quit() };
}

const event = (n) => ({
  event_key: `k${n}`,
  account_ref_id: 'acct_0',
  product_code: 'p',
  meter_code: 'm',
  quantity: 1,
});

/** The three steps on one client, timed 16 in flight. */
async function steps(label, client, billing) {
  const prefix = `bench:${label.replace(/\W/g, '')}:`;
  const store = redisAccessStore(client, { prefix });
  // Fill the store once through a cache that keeps answers; the measured one keeps them 1 ms, and
  // cycles through the accounts, so each lookup misses memory and reads the answer from Redis.
  const filler = createAccessCache(billing, { store });
  for (let i = 0; i < ACCOUNTS; i++) await filler.isActive({ account_ref_id: `acct_${i}` });
  const access = createAccessCache(billing, { store, ttlMs: 1, denyTtlMs: 1, staleMs: 1 });
  const dedupe = redisDedupeStore(client, { prefix: `${prefix}dedupe:` });
  const spool = redisSpool(client, { stream: `${prefix}stream` });
  await spool.open();
  let n = 0;
  const t = await timeTasks(
    {
      [`${label}: access lookup (store read)`]: async () => {
        if (!(await access.isActive({ account_ref_id: `acct_${n++ % ACCOUNTS}` })))
          throw new Error('inactive');
      },
      [`${label}: dedupe claim`]: async () => {
        if ((await dedupe.claim(`evt_${n++}`, 't', 30_000)) !== 'claimed') throw new Error('not claimed');
      },
      [`${label}: spool append`]: () => spool.append([event(n++)]),
    },
    { time: 1000, warmupTime: 200, concurrency: 16 },
  );
  await spool.close();
  return { rows: t, hits: access.stats().hits };
}

/** One append at a time, without and with `waitReplicas: 1`. */
async function waitCost(label, client) {
  const plain = redisSpool(client, { stream: `bench:wait:${label}` });
  const waiting = redisSpool(client, { stream: `bench:wait:${label}`, waitReplicas: 1 });
  await plain.open();
  await waiting.open();
  let n = 0;
  const t = await timeTasks(
    {
      [`${label}: append`]: () => plain.append([event(n++)]),
      [`${label}: append, waitReplicas 1`]: () => waiting.append([event(n++)]),
    },
    { time: 1000, warmupTime: 200 },
  );
  await plain.close();
  await waiting.close();
  return t;
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const mock = await startMock({ accounts: ACCOUNTS });
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
  const node = await startRedisServer();
  const master = await startRedisServer();
  const replica = await startReplica(master.port);
  const cluster = await startCluster();
  const table = {};
  let hits = 0;
  const wait = {};
  for (const kind of ['ioredis', 'node-redis']) {
    for (const [where, target] of [
      ['one node', { port: node.port }],
      ['cluster', { cluster: cluster.rootNodes }],
    ]) {
      const { client, close } = await clientsOf(kind, target);
      const r = await steps(`${kind}, ${where}`, client, billing);
      Object.assign(table, r.rows);
      hits += r.hits;
      await close();
    }
    const { client, close } = await clientsOf(kind, { port: master.port });
    Object.assign(wait, await waitCost(kind, client));
    await close();
  }
  await Promise.all([node.stop(), master.stop(), replica.kill(), cluster.stop(), mock.close()]);
  const goals = [];
  for (const step of ['access lookup (store read)', 'dedupe claim', 'spool append']) {
    const line = ['ioredis', 'node-redis'].map((kind) => {
      const one = table[`${kind}, one node: ${step}`];
      const many = table[`${kind}, cluster: ${step}`];
      return `${kind} ${one.hz} → ${many.hz} ops/s (${r3(many.hz / one.hz)}×), p99 ${one.p99} → ${many.p99} µs`;
    });
    goals.push(goal(`${step}, 16 in flight, one node → cluster`, line.join('; '), '', null));
  }
  goals.push(
    goal(
      'every timed access lookup read the store (none answered from memory)',
      `${hits} from memory`,
      '0',
      hits === 0,
    ),
  );
  for (const kind of ['ioredis', 'node-redis']) {
    const without = wait[`${kind}: append`];
    const withWait = wait[`${kind}: append, waitReplicas 1`];
    goals.push(
      goal(
        `${kind}: waitReplicas 1 per append, one at a time, master + 1 replica`,
        `p50 +${r3(withWait.p50 - without.p50)} µs, p99 +${r3(withWait.p99 - without.p99)} µs`,
        '',
        null,
      ),
    );
  }
  return { goals, table, wait };
}
