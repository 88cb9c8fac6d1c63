// Invalidation across instances: 4 processes, each an access cache on `redisAccessStore` (one
// redis-server with node-redis, then a Redis Cluster with ioredis), asking the mock in this process.
// Each round the account flips at the mock, every process looks it up every 2 ms (its old answer,
// from memory) while one calls `invalidate`: the delay until each sees the new state.
import { fork } from 'node:child_process';
import { BillingClient, createAccessCache } from 'billing-sdk';
import { redisAccessStore } from 'billing-sdk/redis';
import { killOnExit, startCluster, startRedisServer } from '../scripts/servers.mjs';
import { goal, isMain, quantile, r3, sleep, startMock } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Invalidation across instances';
export const how =
  "4 processes, each an access cache on `redisAccessStore` (one redis-server with node-redis, then a 3+3 Redis Cluster with ioredis), asking the mock over loopback. 5 rounds to warm up, then 30 timed: the account flips at the mock, every process looks it up every 2 ms (its old answer, from memory) while one calls `invalidate`; the delay is from the call to each process seeing the new state (one clock, the host's).";

const PROCESSES = 4;
const ROUNDS = 30;
/** Rounds first, not counted: the processes' first invalidations run their code cold (JIT, the clients' first pub/sub). */
const WARMUP = 5;
const ACCOUNT = 'acct_0';
const now = () => performance.timeOrigin + performance.now();

async function connect(target) {
  if (target.url) {
    const { createClient } = await import('redis');
    const client = createClient({ url: target.url });
    client.on('error', () => {});
    return client.connect();
  }
  const { Cluster } = await import('ioredis');
  const cluster = new Cluster(target.cluster);
  cluster.on('error', () => {});
  await new Promise((resolve) => cluster.once('ready', resolve));
  return cluster;
}

/** One instance: answers the parent's messages (lookup, until, invalidate) over IPC. */
async function instance({ target, prefix, baseUrl, apiKey }) {
  const billing = new BillingClient({ apiKey, baseUrl, logLevel: 'off', maxRetries: 0 });
  let storeErrors = 0;
  const access = createAccessCache(billing, {
    ttlMs: 60_000,
    staleMs: 60_000,
    denyTtlMs: 60_000,
    store: redisAccessStore(await connect(target), { prefix }),
    onError: () => storeErrors++,
  });
  const lookup = () => access.isActive({ account_ref_id: ACCOUNT });
  process.on('message', async ({ cmd, expect }) => {
    if (cmd === 'lookup') process.send({ value: await lookup() });
    else if (cmd === 'invalidate') {
      const at = now();
      await access.invalidate(ACCOUNT);
      process.send({ at });
    } else if (cmd === 'until') {
      while ((await lookup()) !== expect) await sleep(2);
      process.send({ at: now(), storeErrors });
    }
  });
  await lookup();
  process.send({ ready: true });
}

/** Sends `message` and resolves to the first answer `pick` accepts. */
function ask(child, message, pick = () => true) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (!pick(m)) return;
      child.off('message', on);
      resolve(m);
    };
    child.on('message', on);
    if (message) child.send(message);
  });
}

async function topology(name, target, mock) {
  const prefix = `bench:${name.replace(/\W/g, '')}:`;
  const children = Array.from({ length: PROCESSES }, () =>
    killOnExit(
      fork(new URL(import.meta.url), [
        JSON.stringify({ target, prefix, baseUrl: mock.baseUrl, apiKey: mock.apiKey }),
      ]),
    ),
  );
  await Promise.all(children.map((c) => ask(c)));
  const delays = [];
  const asked = [];
  let active = true;
  let storeErrors = 0;
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    await Promise.all(children.map((c) => ask(c, { cmd: 'lookup' })));
    const before = mock.requests.count({ method: 'GET', path: '/api/account/' });
    await (active ? mock.lifecycle.cancel : mock.lifecycle.paymentSucceeded)({ account_ref_id: ACCOUNT });
    active = !active;
    // The invalidating child answers 'until' and 'invalidate' in either order: told apart by shape.
    const seen = children.map((c) => ask(c, { cmd: 'until', expect: active }, (m) => 'storeErrors' in m));
    const invalidated = ask(children[round % PROCESSES], { cmd: 'invalidate' }, (m) => !('storeErrors' in m));
    const [{ at }, answers] = await Promise.all([invalidated, Promise.all(seen)]);
    storeErrors = Math.max(storeErrors, ...answers.map((a) => a.storeErrors));
    const requests = mock.requests.count({ method: 'GET', path: '/api/account/' }) - before;
    if (round < WARMUP) continue;
    asked.push(requests);
    for (const a of answers) delays.push(a.at - at);
  }
  for (const c of children) c.kill();
  const sorted = delays.sort((a, b) => a - b);
  return {
    topology: name,
    samples: sorted.length,
    p50_ms: r3(quantile(sorted, 0.5)),
    p99_ms: r3(quantile(sorted, 0.99)),
    max_ms: r3(sorted.at(-1)),
    serviceRequestsPerRound: [...new Set(asked)],
    storeErrors,
  };
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const mock = await startMock({ accounts: 1 });
  const node = await startRedisServer();
  const cluster = await startCluster();
  const rows = [
    await topology('one redis-server (node-redis)', { url: node.url }, mock),
    await topology('Redis Cluster 3+3 (ioredis)', { cluster: cluster.rootNodes }, mock),
  ];
  await Promise.all([node.stop(), cluster.stop(), mock.close()]);
  const goals = rows.flatMap((r) => [
    goal(
      `${r.topology}: invalidate → every process sees the new state`,
      `p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, max ${r.max_ms} ms (${r.samples} samples)`,
      'p99 ≤ 100 ms',
      r.p99_ms <= 100,
    ),
    goal(
      `${r.topology}: requests to the service per round; store errors`,
      `${r.serviceRequestsPerRound.join(' or ')}; ${r.storeErrors}`,
      '1; 0',
      r.serviceRequestsPerRound.length === 1 && r.serviceRequestsPerRound[0] === 1 && r.storeErrors === 0,
    ),
  ]);
  return { goals, rounds: ROUNDS, processes: PROCESSES, table: rows };
}

if (isMain(import.meta)) await instance(JSON.parse(process.argv[2]));
