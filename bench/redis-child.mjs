// One child of the redis mode (bench/redis.mjs, issue 28): `billing-sdk/redis` from the built package
// on one redis-server and on a Redis Cluster, through the four clients an application passes as they
// are (node-redis createClient / createCluster, ioredis Redis / Cluster), all connected at once and
// measured in alternating blocks. Options as JSON in argv[2]:
//   {targets: {node, replicated, cluster}, baseUrl, apiKey, accounts: [first, count], prefix,
//    windowMs, blocks, inFlight, waitInFlight, parts: ['ops', 'wait'], tag}
// ops: the shared access lookup (`createAccessCache` on `redisAccessStore`, an answer the store holds
// and the process's memory does not), the dedupe claim (`redisDedupeStore.claim`, a fresh id each) and
// the spool append (`redisSpool.append([event])`), `inFlight` calls in flight, every call timed.
// wait: `redisSpool.append` with and without `waitReplicas: 1`, on a master with one replica and on
// the cluster, at each of `waitInFlight`. Prints one BENCH_RESULT line (shared.mjs).
import { BillingClient, createAccessCache } from 'billing-sdk';
import { redisAccessStore, redisDedupeStore, redisSpool } from 'billing-sdk/redis';
import { distribution, ns } from './percall.mjs';
import { reportAndExit, sleep } from './shared.mjs';

const o = JSON.parse(process.argv[2] ?? '{}');

/**
 * A client of `kind` connected to `nodes`, as an application makes it (options left at their
 * defaults), and `command(args)` for the bench's own commands (routed by args[1] on a cluster).
 */
async function connect(kind, nodes) {
  if (kind === 'node-redis' || kind === 'node-redis-cluster') {
    const { createClient, createCluster } = await import('redis');
    const client =
      kind === 'node-redis'
        ? createClient({ url: `redis://${nodes[0].host}:${nodes[0].port}` })
        : createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
    client.on('error', () => {});
    await client.connect();
    const command =
      kind === 'node-redis'
        ? (args) => client.sendCommand(args)
        : (args) => client.sendCommand(args[1], false, args);
    return { kind, client, command };
  }
  const { Cluster, Redis } = await import('ioredis');
  const client =
    kind === 'ioredis'
      ? new Redis({ host: nodes[0].host, port: nodes[0].port, lazyConnect: true })
      : new Cluster(nodes, { lazyConnect: true });
  client.on('error', () => {});
  await client.connect();
  return { kind, client, command: (args) => client.call(args[0], ...args.slice(1)) };
}

/**
 * Runs `fn` with `inFlight` calls in flight for `ms` (each loop starts its next call when its last
 * one settled), every call timed into `into`; the calls made and the window's length (ms, until the
 * last call settled).
 */
async function window(fn, inFlight, ms, into) {
  const t0 = performance.now();
  const end = t0 + ms;
  let calls = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        const s = ns();
        await fn();
        into.push(Number(ns() - s));
        calls++;
      }
    }),
  );
  return { calls, ms: performance.now() - t0 };
}

/** A measured series: every call's ns, and the windows' calls and ms (for ops/s). */
const series = () => ({ times: [], calls: 0, ms: 0, windows: [] });
function record(s, w) {
  s.calls += w.calls;
  s.ms += w.ms;
  s.windows.push((w.calls / w.ms) * 1000);
}
const summary = (s) => {
  const d = distribution(Float64Array.from(s.times));
  return { ...d, calls: s.calls, opsPerSec: (s.calls / s.ms) * 1000, windows: s.windows };
};

/** A usage event as the tracker spools it. */
let eventNo = 0;
const event = () => ({
  account_ref_id: 'acct_bench',
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  quantity: 1,
  event_key: `bench_${o.tag}_${process.pid}_${eventNo++}`,
});

/** The version Redis reports (INFO server). */
async function redisVersion(c) {
  const info = String(await c.command(['INFO', 'server']));
  return /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown';
}

/** An account of the run (the mock knows it, active). */
const account = (i) => `${o.accounts[0]}${i % o.accounts[1]}`;

async function ops() {
  const { node, cluster } = o.targets;
  const billing = new BillingClient({ apiKey: o.apiKey, baseUrl: o.baseUrl, logLevel: 'off', maxRetries: 0 });
  const kinds = [
    ['one node', 'ioredis', [node]],
    ['one node', 'node-redis', [node]],
    ['cluster', 'ioredis-cluster', cluster],
    ['cluster', 'node-redis-cluster', cluster],
  ];
  const clients = [];
  for (const [topology, kind, nodes] of kinds) clients.push({ topology, ...(await connect(kind, nodes)) });
  const versions = {
    node: await redisVersion(clients[0]),
    cluster: await redisVersion({ command: (args) => clients[2].client.call(...args) }),
  };
  const onErrors = [];
  const onError = (error) => void onErrors.push(String(error?.message ?? error));

  // The answers in the store: a cache with long ttls looks every account up once per topology (the
  // first child asks the mock; later ones find the answers already there).
  for (const c of clients.filter((c) => c.kind.startsWith('ioredis'))) {
    const writer = createAccessCache(billing, {
      ttlMs: 3_600_000,
      denyTtlMs: 3_600_000,
      staleMs: 3_600_000,
      store: redisAccessStore(c.client, { prefix: o.prefix }),
      onError,
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < o.accounts[1]) {
          const i = next++;
          if (!(await writer.isActive({ account_ref_id: account(i) })))
            throw new Error(`${account(i)} inactive`);
        }
      }),
    );
    await writer.close();
  }
  // The writer's store writes are not awaited by its lookups.
  await sleep(300);

  /** What each client's steps are measured on. */
  for (const [i, c] of clients.entries()) {
    // The reader keeps an answer 1 ms (ttlMs, staleMs): it holds nothing by the time it comes back to an
    // account (every `count` lookups), so each lookup is a store read that finds the writer's answer.
    c.read = { leased: 0 };
    const store = redisAccessStore(c.client, { prefix: o.prefix });
    const reads = c.read;
    c.reader = createAccessCache(billing, {
      ttlMs: 1,
      denyTtlMs: 1,
      staleMs: 1,
      // A read that found no fresh answer takes the lease (and the lookup asks the service): counted.
      store: {
        ...store,
        read: async (...args) => {
          const r = await store.read(...args);
          if (r.leased) reads.leased++;
          return r;
        },
      },
      onError,
    });
    let next = i * 7919;
    c.lookup = async () => {
      if (!(await c.reader.isActive({ account_ref_id: account(next++) }))) throw new Error('inactive');
    };
    const dedupe = redisDedupeStore(c.client, { prefix: `bench:${o.tag}:dedupe:` });
    let id = 0;
    const token = `t${process.pid}`;
    const idTag = `${o.tag}-${c.kind}-${process.pid}`;
    c.claim = async () => {
      const outcome = await dedupe.claim(`${idTag}-${id++}`, token, 30_000);
      if (outcome !== 'claimed') throw new Error(`claim: ${outcome}`);
    };
    if (c.topology === 'cluster') {
      // The same claims with a prefix holding a hash tag: every id in one slot, so on one master.
      const oneSlot = redisDedupeStore(c.client, { prefix: `{bench-${o.tag}}:dedupe:` });
      c.claimSlot = async () => {
        const outcome = await oneSlot.claim(`${idTag}-${id++}`, token, 30_000);
        if (outcome !== 'claimed') throw new Error(`claim: ${outcome}`);
      };
    }
    c.stream = `bench:${o.tag}:spool:${c.kind}`;
    const spool = redisSpool(c.client, { stream: c.stream });
    await spool.open();
    c.spool = spool;
    c.append = () => spool.append([event()]);
  }
  const trim = () => Promise.all(clients.map((c) => c.command(['XTRIM', c.stream, 'MAXLEN', '0'])));

  const STEPS = ['lookup', 'claim', 'claimSlot', 'append'];
  const results = {};
  for (const step of STEPS) for (const c of clients) if (c[step]) results[`${step} ${c.kind}`] = series();
  // Untimed warm-up of every step on every client.
  for (const step of STEPS) for (const c of clients) if (c[step]) await window(c[step], o.inFlight, 300, []);
  await trim();
  const before = clients.map((c) => ({ hits: c.reader.stats().hits, leased: c.read.leased }));
  for (let block = 0; block < o.blocks; block++) {
    for (const step of STEPS) {
      // The clients' order rotated each block: none always runs first or after the same neighbour.
      const order = clients.map((_, i) => clients[(i + block) % clients.length]);
      for (const c of order) {
        if (!c[step]) continue;
        const s = results[`${step} ${c.kind}`];
        record(s, await window(c[step], o.inFlight, o.windowMs, s.times));
      }
      if (step === 'append') await trim();
    }
  }
  const memoryHits = clients.reduce((n, c, i) => n + c.reader.stats().hits - before[i].hits, 0);
  const leasedReads = clients.reduce((n, c, i) => n + c.read.leased - before[i].leased, 0);
  for (const c of clients) {
    await c.spool.close();
    await c.reader.close();
  }
  const out = {};
  for (const [key, s] of Object.entries(results)) out[key] = summary(s);
  return {
    results: out,
    versions,
    memoryHits,
    leasedReads,
    onErrors: onErrors.slice(0, 5),
    onErrorCount: onErrors.length,
  };
}

async function wait() {
  const { replicated, cluster } = o.targets;
  const kinds = [
    ['master + replica', 'ioredis', [replicated]],
    ['master + replica', 'node-redis', [replicated]],
    ['cluster', 'ioredis-cluster', cluster],
    ['cluster', 'node-redis-cluster', cluster],
  ];
  const configs = [];
  for (const [topology, kind, nodes] of kinds) {
    const c = { topology, ...(await connect(kind, nodes)) };
    // Both spools on one stream (so on one master and its replica), each its own consumer.
    c.stream = `bench:${o.tag}:wait:${kind}`;
    c.spools = [
      redisSpool(c.client, { stream: c.stream }),
      redisSpool(c.client, { stream: c.stream, waitReplicas: 1 }),
    ];
    for (const s of c.spools) await s.open();
    configs.push(c);
  }
  const results = {};
  for (const n of o.waitInFlight)
    for (const c of configs) for (const w of [0, 1]) results[`${n} ${c.kind} ${w}`] = series();
  const appendOf = (c, w) => () => c.spools[w].append([event()]);
  for (const n of o.waitInFlight)
    for (const c of configs) for (const w of [0, 1]) await window(appendOf(c, w), n, 200, []);
  for (let block = 0; block < o.blocks; block++) {
    for (const n of o.waitInFlight) {
      const order = configs.map((_, i) => configs[(i + block) % configs.length]);
      for (const c of order) {
        // Without, then with; the other way round the next block.
        for (const w of block % 2 ? [1, 0] : [0, 1]) {
          const s = results[`${n} ${c.kind} ${w}`];
          record(s, await window(appendOf(c, w), n, o.waitWindowMs, s.times));
        }
        await c.command(['XTRIM', c.stream, 'MAXLEN', '0']);
      }
    }
  }
  for (const c of configs) for (const s of c.spools) await s.close();
  const out = {};
  for (const [key, s] of Object.entries(results)) out[key] = summary(s);
  return { results: out };
}

reportAndExit(
  (async () => {
    const result = {};
    if (o.parts.includes('ops')) result.ops = await ops();
    if (o.parts.includes('wait')) result.wait = await wait();
    return result;
  })(),
);
