// The redis mode of the bench (`npm run bench -- --redis`, issue 28 "Measure"): what each step of
// `billing-sdk/redis` costs on one redis-server and on a 3-master, 3-replica Redis Cluster, side by
// side in one run, and what `waitReplicas: 1` costs per spool append. The servers are the tests' own
// harness (test/redis/*.ts, through redis-harness.mjs); the billing service is the SDK's mock
// (billing-sdk/testing) in this process; every measurement runs in a fresh child (redis-child.mjs),
// one per --rounds, all four clients connected at once and measured in alternating blocks. This file
// runs that (runRedis), turns it into figures (summarizeRedis) and renders the section of RESULTS.md
// between `<!-- redis:start -->` and `<!-- redis:end -->`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { loadRedisHarness } from './redis-harness.mjs';
import { fmtInt, fmtNum, mdTable, median } from './report.mjs';
import { compactGoals, firstLine, sectionFoot, sectionHead } from './sections.mjs';
import { runChild } from './spawn.mjs';

const childPath = fileURLToPath(new URL('./redis-child.mjs', import.meta.url));

/** Parts, for --skip: the three steps on one node vs the cluster; append with and without waitReplicas. */
export const REDIS_PARTS = ['ops', 'wait'];
/** Calls in flight in the steps' windows. */
const IN_FLIGHT = 16;
/** Calls in flight for the waitReplicas comparison: one at a time (the latency), and IN_FLIGHT. */
const WAIT_IN_FLIGHT = [1, IN_FLIGHT];
/** Alternating blocks per child: each block runs one window of every step on every client. */
const BLOCKS = 2;
/** Accounts the access lookups rotate over (the mock knows them, active). */
const ACCOUNTS = 1_000;
const ACCOUNT_PREFIX = 'acct_redis_';

const STEPS = {
  lookup: 'shared access lookup (`isActive`, a store read)',
  claim: 'dedupe `claim` (a fresh id)',
  claimSlot: 'dedupe `claim`, prefix with a hash tag (every id in one slot)',
  append: 'spool `append([event])`',
};
const OPS_CLIENTS = [
  ['ioredis', 'one node', 'ioredis `Redis`'],
  ['node-redis', 'one node', 'node-redis `createClient`'],
  ['ioredis-cluster', 'cluster', 'ioredis `Cluster`'],
  ['node-redis-cluster', 'cluster', 'node-redis `createCluster`'],
];
/** The clients a step runs on: the one-slot claim only on the cluster. */
const clientsOf = (step) =>
  step === 'claimSlot' ? OPS_CLIENTS.filter(([k]) => k.endsWith('-cluster')) : OPS_CLIENTS;
/** Cluster vs one node, per client library. */
const PAIRS = [
  ['ioredis', 'ioredis-cluster', 'ioredis'],
  ['node-redis', 'node-redis-cluster', 'node-redis'],
];
const WAIT_CLIENTS = [
  ['ioredis', 'master + 1 replica', 'ioredis `Redis`'],
  ['node-redis', 'master + 1 replica', 'node-redis `createClient`'],
  ['ioredis-cluster', 'cluster', 'ioredis `Cluster`'],
  ['node-redis-cluster', 'cluster', 'node-redis `createCluster`'],
];

/** The installed version of a package the children import (resolved from bench/, as they do). */
function packageVersion(name) {
  try {
    const require = createRequire(import.meta.url);
    return JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

/**
 * @param {object} o
 * @param {string} o.cwd
 * @param {(msg: string) => void} o.log
 * @param {number} o.rounds     fresh children
 * @param {number} o.windowMs   one window of a step on one client
 * @param {Set<string>} o.skip
 */
export async function runRedis(o) {
  const parts = REDIS_PARTS.filter((p) => !o.skip.has(p));
  const waitWindowMs = Math.max(100, Math.round(o.windowMs * 0.6));
  const data = {
    rounds: o.rounds,
    windowMs: o.windowMs,
    waitWindowMs,
    blocks: BLOCKS,
    inFlight: IN_FLIGHT,
    waitInFlight: WAIT_IN_FLIGHT,
    accounts: ACCOUNTS,
    parts,
    children: [],
    versions: { ioredis: packageVersion('ioredis'), redis: packageVersion('redis'), server: 'unknown' },
    failures: {},
  };
  const { startMockServer } = await import('billing-sdk/testing');
  const mock = await startMockServer();
  const stops = [];
  try {
    for (let i = 0; i < ACCOUNTS; i++)
      await mock.lifecycle.subscribe({ account_ref_id: `${ACCOUNT_PREFIX}${i}` });
    const harness = await loadRedisHarness();
    const t0 = performance.now();
    const node = await harness.startRedisServer();
    stops.push(() => node.stop());
    const master = await harness.startRedisServer();
    stops.push(() => master.stop());
    const replica = await harness.startReplica(master.port);
    stops.push(() => replica.kill());
    const cluster = await harness.startCluster();
    stops.push(() => cluster.stop());
    o.log(
      `redis: one redis-server :${node.port}, a master :${master.port} with a replica :${replica.port}, ` +
        `a cluster (masters ${cluster.rootNodes.map((n) => n.port).join(', ')}, 3 replicas) up in ` +
        `${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const host = '127.0.0.1';
    const options = {
      parts,
      targets: {
        node: { host, port: node.port },
        replicated: { host, port: master.port },
        cluster: cluster.rootNodes.map((n) => ({ host: n.host, port: n.port })),
      },
      baseUrl: mock.baseUrl,
      apiKey: mock.apiKey,
      accounts: [ACCOUNT_PREFIX, ACCOUNTS],
      prefix: 'bench:access:',
      windowMs: o.windowMs,
      waitWindowMs,
      blocks: BLOCKS,
      inFlight: IN_FLIGHT,
      waitInFlight: WAIT_IN_FLIGHT,
    };
    const perChild =
      (parts.includes('ops') ? 14 * BLOCKS * o.windowMs + 14 * 300 : 0) +
      (parts.includes('wait') ? WAIT_IN_FLIGHT.length * 4 * 2 * (BLOCKS * waitWindowMs + 200) : 0);
    for (let round = 0; round < o.rounds; round++) {
      const requestsBefore = mock.requests.count();
      const started = performance.now();
      try {
        const r = await runChild(
          childPath,
          { ...options, tag: `r${round}` },
          { cwd: o.cwd, timeoutMs: perChild * 3 + 60_000, what: `redis child ${round + 1}` },
        );
        r.serviceRequests = mock.requests.count() - requestsBefore;
        data.children.push(r);
        if (r.ops) data.versions.server = r.ops.versions.node;
        o.log(
          `child ${round + 1}/${o.rounds} (${((performance.now() - started) / 1000).toFixed(0)} s): ${childLine(r)}`,
        );
      } catch (error) {
        data.failures[`child ${round + 1}`] = String(error?.stack ?? error);
        o.log(`child ${round + 1} FAILED: ${firstLine(error?.message ?? error)}`);
      }
    }
    if (data.versions.server === 'unknown') {
      const info = await cluster.cli(cluster.rootNodes[0].port, 'INFO', 'server');
      data.versions.server = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await mock.close();
  }
  return data;
}

const opsPerSec = (x) => fmtInt(x);
const us = (nsValue) =>
  nsValue < 1e6 ? `${fmtNum(nsValue / 1000, 0)} µs` : `${fmtNum(nsValue / 1e6, 2)} ms`;

/** A difference of ns, signed. */
const plus = (nsValue) => (nsValue < 0 ? `−${us(-nsValue)}` : `+${us(nsValue)}`);

/** One child's progress line. */
function childLine(r) {
  const out = [];
  if (r.ops) {
    for (const step of Object.keys(STEPS)) {
      const cells = clientsOf(step).map(([kind]) => {
        const s = r.ops.results[`${step} ${kind}`];
        return `${kind} ${opsPerSec(s.opsPerSec)}/s p99 ${us(s.p99)}`;
      });
      out.push(`${step}: ${cells.join(', ')}`);
    }
    out.push(
      `memory hits ${r.ops.memoryHits}, leased reads ${r.ops.leasedReads}, onError ${r.ops.onErrorCount}`,
    );
  }
  if (r.wait) {
    const cells = WAIT_CLIENTS.map(([kind]) => {
      const [without, withWait] = [0, 1].map((w) => r.wait.results[`1 ${kind} ${w}`]);
      return `${kind} p50 ${us(without.p50)} → ${us(withWait.p50)}`;
    });
    out.push(`append, 1 in flight, without → with waitReplicas 1: ${cells.join(', ')}`);
  }
  out.push(`requests to the mock ${r.serviceRequests}`);
  return out.join('\n    ');
}

/** Median (min–max) over children of `f(child)`. */
function over(children, f) {
  const xs = children.map(f).filter(Number.isFinite);
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length };
}

/** Everything the report shows. @param {Awaited<ReturnType<typeof runRedis>>} data */
export function summarizeRedis(data) {
  const goals = [];
  const withOps = data.children.filter((c) => c.ops);
  const withWait = data.children.filter((c) => c.wait);
  const ops = {};
  for (const step of Object.keys(STEPS)) {
    for (const [kind] of clientsOf(step)) {
      const key = `${step} ${kind}`;
      ops[key] = {
        opsPerSec: over(withOps, (c) => c.ops.results[key].opsPerSec),
        p50: over(withOps, (c) => c.ops.results[key].p50),
        p99: over(withOps, (c) => c.ops.results[key].p99),
        p999: over(withOps, (c) => c.ops.results[key].p999),
        calls: withOps.reduce((n, c) => n + c.ops.results[key].calls, 0),
      };
    }
  }
  const wait = {};
  for (const n of data.waitInFlight) {
    for (const [kind] of WAIT_CLIENTS) {
      for (const w of [0, 1]) {
        const key = `${n} ${kind} ${w}`;
        wait[key] = {
          opsPerSec: over(withWait, (c) => c.wait.results[key].opsPerSec),
          p50: over(withWait, (c) => c.wait.results[key].p50),
          p99: over(withWait, (c) => c.wait.results[key].p99),
          calls: withWait.reduce((m, c) => m + c.wait.results[key].calls, 0),
        };
      }
    }
  }
  for (const [part, failure] of Object.entries(data.failures))
    goals.push({ ok: false, text: `${part}: failed: ${firstLine(failure)}` });
  if (withOps.length) {
    for (const step of ['lookup', 'claim', 'append']) {
      const cells = PAIRS.map(([one, clustered, lib]) => {
        const a = ops[`${step} ${one}`];
        const b = ops[`${step} ${clustered}`];
        return (
          `${lib} ${fmtInt(a.opsPerSec.median)} → ${fmtInt(b.opsPerSec.median)} ops/s ` +
          `(${fmtNum(b.opsPerSec.median / a.opsPerSec.median)}×), p99 ${us(a.p99.median)} → ${us(b.p99.median)}`
        );
      });
      goals.push({
        ok: null,
        text: `${STEPS[step]}, ${data.inFlight} in flight, one node → cluster: ${cells.join('; ')}`,
      });
    }
    const hits = withOps.reduce((n, c) => n + c.ops.memoryHits, 0);
    const leased = withOps.reduce((n, c) => n + c.ops.leasedReads, 0);
    const errors = withOps.reduce((n, c) => n + c.ops.onErrorCount, 0);
    goals.push({
      ok: hits === 0 && leased === 0 && errors === 0,
      text:
        `every timed access lookup was one store read that found the answer: answered from memory ${hits}, ` +
        `store reads that found none (the service asked) ${leased}, store errors ${errors} (goal: 0 each)`,
    });
  }
  if (withWait.length) {
    const cells = WAIT_CLIENTS.map(([kind, topology, label]) => {
      const a = wait[`1 ${kind} 0`];
      const b = wait[`1 ${kind} 1`];
      return `${topology}, ${label.replace(/`/g, '')}: p50 ${plus(b.p50.median - a.p50.median)}, p99 ${plus(b.p99.median - a.p99.median)}`;
    });
    goals.push({
      ok: null,
      text: `\`waitReplicas: 1\` per append, one at a time (p50/p99 with − without): ${cells.join('; ')}`,
    });
  }
  return { goals, ops, wait, children: data.children.length };
}

const range = (r, fmt) => (r.n > 1 ? `${fmt(r.median)} (${fmt(r.min)}–${fmt(r.max)})` : fmt(r.median));

/**
 * The section, markers included.
 * @param {Awaited<ReturnType<typeof runRedis>>} data
 * @param {ReturnType<typeof summarizeRedis>} summary
 * @param {object} meta
 */
export function renderRedisMarkdown(data, summary, meta) {
  const out = sectionHead({
    name: 'redis',
    title: 'Redis: one node vs a cluster',
    about:
      '`billing-sdk/redis` from the built package on one `redis-server` and on a 3-master, 3-replica Redis ' +
      'Cluster (the tests’ harness, test/redis/cluster.ts) in one run, through the four clients it takes as ' +
      'they are; the billing service is the SDK’s mock (`billing-sdk/testing`) in the bench process, idle ' +
      'while measured. Informational (the issue sets no goal for these figures), but for the check that every ' +
      'timed lookup was a store read.',
    goals: summary.goals,
    meta,
  });
  const children = summary.children;
  if (data.children.some((c) => c.ops)) {
    out.push(`### The steps, ${data.inFlight} in flight: one node vs the cluster`, '');
    const rows = [];
    for (const step of Object.keys(STEPS)) {
      for (const [kind, topology, label] of clientsOf(step)) {
        const s = summary.ops[`${step} ${kind}`];
        const pair = PAIRS.find((p) => p[1] === kind);
        const ratio = pair
          ? `${fmtNum(s.opsPerSec.median / summary.ops[`${step === 'claimSlot' ? 'claim' : step} ${pair[0]}`].opsPerSec.median)}×`
          : '1';
        rows.push([
          STEPS[step],
          topology,
          label,
          range(s.opsPerSec, fmtInt),
          ratio,
          us(s.p50.median),
          range(s.p99, us),
          us(s.p999.median),
          fmtInt(s.calls),
        ]);
      }
    }
    out.push(
      mdTable(
        [
          'step',
          'Redis',
          'client',
          'ops/s: median of children (min–max)',
          'cluster ÷ one node (same library)',
          'p50',
          'p99: median of children (min–max)',
          'p99.9',
          'calls timed',
        ],
        rows,
      ),
      '',
    );
    out.push(
      `${children} fresh children (\`bench/redis-child.mjs\`), one after the other, each with the four clients ` +
        'connected at once, as an application makes them (default options; ioredis `Cluster` seeded with the ' +
        'three masters, node-redis `createCluster` with them as `rootNodes`), and on each client an access cache, ' +
        `a dedupe store and a spool (a stream of its own). In each child, after 0.3 s of untimed warm-up of every ` +
        `step on every client, ${data.blocks} blocks; a block runs, for each step in turn, one ${data.windowMs} ms ` +
        `window on each client (the clients’ order rotated each block): ${data.inFlight} loops, each awaiting ` +
        'one call after the other, every call timed on its own (`process.hrtime.bigint()` around the awaited ' +
        'call). ops/s is the calls of a child’s windows ÷ their time; p50/p99/p99.9 are over every call a child ' +
        'timed on that client, and the table shows the median over children (min–max). The client process, the ' +
        'Redis processes (7 of them) and the mock share the 2 cores: a figure is what this machine does with ' +
        'its client beside Redis, comparable within the run.',
      '',
      `- **Shared access lookup**: \`createAccessCache(billing, { store: redisAccessStore(client), ttlMs: 1, ` +
        `denyTtlMs: 1, staleMs: 1 })\`; \`isActive\` over ${fmtInt(data.accounts)} active accounts in turn. ` +
        'Each child first looks every account up once per topology through a cache with hour-long ttls ' +
        '(so the store holds the answers; the first child asks the mock, the later ones find them there); the ' +
        'measured cache keeps an answer 1 ms, and comes back to an account only after ' +
        `${fmtInt(data.accounts)} other lookups, so every timed lookup misses memory and reads the store ` +
        '(one `EVAL` of the read script: the answer, the lease key, the account’s generation, in one slot), ' +
        'finds a fresh answer and takes no lease; the cache’s `stats().hits` and a count of reads that took ' +
        'a lease check it (see the Goals). This is what a lookup costs an instance whose memory does not hold ' +
        'the answer while another instance’s does, not a lookup that asks the service.',
      `- **Dedupe claim**: \`redisDedupeStore(client).claim(id, token, 30_000)\`, a fresh id each (answers ` +
        '`claimed`, checked); the ids hash whole (no tag), so they spread over the three masters. On the ' +
        'cluster also with a prefix holding a hash tag (`{bench-…}:dedupe:`): the same claims, every id in one ' +
        'slot, so on one master (its ratio is to the one node’s claim), which tells what spreading costs here.',
      `- **Spool append**: \`redisSpool(client, { stream })\` opened, then \`append([event])\` of one usage event ` +
        '(`waitReplicas` 0, the default). One stream is one key, so on the cluster one master takes every append ' +
        'of a spool (see the guide on spreading over several streams). The stream is trimmed (untimed, `XTRIM ' +
        'MAXLEN 0`) after each block.',
      '',
    );
  }
  if (data.children.some((c) => c.wait)) {
    out.push('### What `waitReplicas: 1` costs per append', '');
    const rows = [];
    for (const n of data.waitInFlight) {
      for (const [kind, topology, label] of WAIT_CLIENTS) {
        const a = summary.wait[`${n} ${kind} 0`];
        const b = summary.wait[`${n} ${kind} 1`];
        rows.push([
          String(n),
          topology,
          label,
          us(a.p50.median),
          us(a.p99.median),
          us(b.p50.median),
          range(b.p99, us),
          plus(b.p50.median - a.p50.median),
          plus(b.p99.median - a.p99.median),
          fmtInt(a.opsPerSec.median),
          fmtInt(b.opsPerSec.median),
        ]);
      }
    }
    out.push(
      mdTable(
        [
          'in flight',
          'Redis',
          'client',
          'without: p50',
          'p99',
          '`waitReplicas: 1`: p50',
          'p99 (min–max)',
          'added p50',
          'added p99',
          'appends/s without',
          'with',
        ],
        rows,
      ),
      '',
    );
    out.push(
      'On each client, two spools on one stream (so on one master and its replica), one with `waitReplicas: 1` ' +
        '(default `waitTimeoutMs` 1 000: the append resolves once `WAIT 1 1000`, sent on the connection that ' +
        'wrote, answers that a replica holds it), in the same children, after the steps above: per block, for ' +
        `each of ${data.waitInFlight.join(' and ')} in flight and each client (rotated), a ${data.waitWindowMs} ms ` +
        'window without and one with (which goes first alternates by block), every append timed; medians over ' +
        'children. One node here is a second redis-server with one replica (`redis-server --replicaof`, the ' +
        'tests’ harness test/redis/replica-server.ts), not the one of the table above, which has none; the ' +
        'cluster is the same one. Redis holds the connection a WAIT runs on until the replica answers (commands ' +
        'sent behind it on that connection wait), and each client here sends all of a node’s commands on one ' +
        `connection: the rows at ${data.waitInFlight.at(-1)} in flight show what that leaves of the throughput.`,
      '',
    );
  }
  const serviceRequests = data.children.map((c) => c.serviceRequests);
  if (serviceRequests.length)
    out.push(
      `Requests the mock answered per child: ${serviceRequests.join(', ')} (the first child fills the store ` +
        `with the ${fmtInt(data.accounts)} accounts’ answers once per topology; none while timing).`,
      '',
    );
  out.push('### Redis and clients', '');
  out.push(
    `redis-server ${data.versions.server} (Debian’s; \`save ""\`, \`appendonly no\`; cluster nodes with ` +
      '`cluster-node-timeout` 1 000), on loopback; ioredis ' +
      `${data.versions.ioredis}; node-redis (\`redis\`) ${data.versions.redis}.`,
    '',
  );
  out.push(...sectionFoot('redis', meta, ['billing-sdk']));
  return `${out.join('\n')}\n`;
}

/** A terminal summary. */
export function renderRedisCompact(summary) {
  return `${['', 'Redis: one node vs a cluster:', ...compactGoals(summary.goals)].join('\n')}\n`;
}
