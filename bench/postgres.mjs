// The postgres mode of the bench (`npm run bench -- --postgres`, issue 27): `billing-sdk/postgres`
// from the built package on a PostgreSQL cluster of the run's own (test/postgres/cluster-server.mjs,
// the tests' harness), node-postgres (`pg`) as the driver (postgres.js too where cheap), the SDK's
// mock (billing-sdk/testing) in this process as the service. This file runs the measurements
// (runPostgres), turns them into goals (summarizePostgres) and renders the section of RESULTS.md
// between `<!-- postgres:start -->` and `<!-- postgres:end -->`.
//
// txcost   what `await tracker.track(event, { transaction })` adds to the app's transaction (BEGIN;
//          INSERT; COMMIT), alternating blocks with and without it, every transaction timed, one fresh
//          child per driver (postgres-child.mjs); then the statement alone (the spool's appendIn, no relay
//          in the process)
// relay    --events N (20 000) events committed into the outbox table, then 1 relay process vs 3
//          (postgres-child.mjs `relay`: a tracker on postgresSpool) sending them to the mock: events/s
//          from `go` until the mock recorded all, each key received once; then again on 3 000 events
//          with the mock answering after 20 ms (a service across a network)
// latency  one idle relay (default pollMs: NOTIFY is what is measured); this process commits one event
//          at a time, 15 ms apart: when the mock received it − when COMMIT returned, p50/p99/max
//          (goal p99 ≤ 100 ms), a relay on each driver
// inbox    webhook deliveries/s through createWebhookHandler, 16 in flight: postgresDedupeStore with
//          onEvent's row written through `{ transaction }` vs the memory store and the row on the pool

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startPostgres } from '../test/postgres/cluster-server.mjs';
import { distribution, fmtNs } from './percall.mjs';
import { fmtInt, fmtNum, fmtRatio, mdTable, median, stats } from './report.mjs';
import { compactGoals, firstLine, sectionFoot, sectionHead } from './sections.mjs';
import { METER, sleep, USAGE_EVENTS_PATH } from './shared.mjs';
import { modeRunner } from './spawn.mjs';

const childPath = fileURLToPath(new URL('./postgres-child.mjs', import.meta.url));

/** Goal of issue 27 on loopback: from COMMIT returned to the service receiving the event, p99. */
export const POSTGRES_LATENCY_GOAL_MS = 100;
/** Parts of the run, for --skip. */
export const POSTGRES_PARTS = ['txcost', 'relay', 'latency', 'inbox'];
export const POSTGRES_DRIVERS = ['pg', 'postgres.js'];
const DRIVER_LABEL = { pg: 'node-postgres (`pg`)', 'postgres.js': 'postgres.js' };
const TXCOST = { blocks: 12, calls: 150, warmupMs: 1500 };
const RELAYS = [1, 3];
/**
 * The relay runs again with the mock answering each POST after this long (a service across a network),
 * on fewer events: there the relays wait on answers, not on the CPU.
 */
const SLOW_SERVICE = { delayMs: 20, events: 3000 };
/** Events per statement when filling the outbox. */
const FILL_BATCH = 1000;
const LATENCY = { warmup: 20, events: 300, spacingMs: 15 };
const INBOX = { blocks: 4, deliveries: 1500, concurrency: 16, duplicateEvery: 10 };

/** A usage event of the mock's demo data with a key of its own. @param {number} n */
const spooled = (n) => ({
  account_ref_id: 'acct_active',
  ...METER,
  quantity: 1,
  metadata: { n },
  event_key: randomUUID(),
});

/**
 * The mock, watched: when each usage POST arrived (by event_key, `performance.now()` of this process,
 * taken when the mock recorded the request, before it answered) and how many new events its store
 * recorded. The mock's own request log is not kept (tens of thousands of requests with their headers
 * would only weigh on this process, which serves them).
 */
function tapMock(mock) {
  const arrivals = new Map();
  let posts = 0;
  let recorded = 0;
  let lastRecordedAt = 0;
  mock.requests.push = (request) => {
    if (request.method !== 'POST' || request.path !== USAGE_EVENTS_PATH) return;
    posts++;
    const key = request.body?.event_key;
    const at = performance.now();
    const seen = arrivals.get(key);
    if (seen) seen.push(at);
    else arrivals.set(key, [at]);
  };
  const recordUsage = mock.store.recordUsage.bind(mock.store);
  mock.store.recordUsage = (input) => {
    const fresh = mock.store.usageEvent(input.event_key) === undefined;
    const event = recordUsage(input);
    if (fresh) {
      recorded++;
      lastRecordedAt = performance.now();
    }
    return event;
  };
  return {
    arrivals,
    get posts() {
      return posts;
    },
    get recorded() {
      return recorded;
    },
    get lastRecordedAt() {
      return lastRecordedAt;
    },
    /** Keys received more than once. */
    repeated: () => [...arrivals.values()].filter((times) => times.length > 1).length,
    reset() {
      arrivals.clear();
      posts = 0;
      recorded = 0;
      lastRecordedAt = 0;
    },
  };
}

/** Waits until `condition()` holds, checking every `everyMs`; throws after `ms`. */
async function until(what, condition, ms, everyMs = 5) {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(everyMs);
  }
}

/** A relay process (postgres-child.mjs `relay`), speaking JSON lines. */
function startRelay(options, cwd) {
  const child = spawn(process.execPath, [childPath, JSON.stringify({ kind: 'relay', ...options })], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s) => {
    stderr += s;
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) messages.push(JSON.parse(line));
  });
  const next = async (type, ms = 30_000) => {
    await until(
      `relay message ${type} (${firstLine(stderr)})`,
      () => messages.some((m) => m.type === type) || child.exitCode !== null,
      ms,
    );
    const found = messages.find((m) => m.type === type);
    if (!found) throw new Error(`relay exited (${child.exitCode}): ${firstLine(stderr)}`);
    return found;
  };
  return {
    next,
    send: (line) => child.stdin.write(`${line}\n`),
    kill: () => child.exitCode === null && child.kill('SIGKILL'),
  };
}

/** Fills `table` (a postgresSpool's, made here) with `n` events: the spool's own INSERT, FILL_BATCH a statement. */
async function fillOutbox(ctx, table, n) {
  const spool = ctx.postgresSpool(ctx.pool, { table });
  await spool.open();
  try {
    for (let i = 0; i < n; i += FILL_BATCH) {
      await spool.append(Array.from({ length: Math.min(FILL_BATCH, n - i) }, (_, j) => spooled(i + j)));
    }
  } finally {
    await spool.close();
  }
}

/** CPU time of the whole machine so far (every process, other jobs included), from /proc/stat, in ticks. */
function machineTicks() {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = fields[3] + fields[4];
    return { busy: fields.reduce((a, b) => a + b, 0) - idle, total: fields.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/** The share of the machine's CPU that was busy between two machineTicks() (NaN without /proc). */
const busyShare = (a, b) => (a && b ? (b.busy - a.busy) / (b.total - a.total) : Number.NaN);

/**
 * What the relays' statements did to `table` (PostgreSQL's statistics, flushed when their connections
 * closed): rows updated (each claim and lease renewal of a row), index and sequential scans.
 */
async function tableStats(pool, table) {
  await sleep(1200); // backends flush their statistics at most once a second
  const { rows } = await pool.query(
    `SELECT n_tup_upd::int AS updated, n_tup_del::int AS deleted, idx_scan::int AS "indexScans",
            seq_scan::int AS "seqScans", n_tup_ins::int AS inserted
     FROM pg_stat_user_tables WHERE relname = $1`,
    [table],
  );
  return rows[0] ?? null;
}

const rowsIn = async (pool, table) => (await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;

/** N events in the outbox, then `relays` relay processes drain it to the mock. */
async function relayRun(o, ctx, relays, n, delayMs) {
  const table = `bench_outbox_${relays}_${randomUUID().slice(0, 8)}`;
  await fillOutbox(ctx, table, n);
  ctx.tap.reset();
  if (delayMs)
    ctx.mock.faults.add({
      method: 'POST',
      path: USAGE_EVENTS_PATH,
      delayMs,
      times: Number.POSITIVE_INFINITY,
    });
  const children = Array.from({ length: relays }, () =>
    startRelay(
      { driver: 'pg', table, url: ctx.url, baseUrl: ctx.mock.baseUrl, apiKey: ctx.mock.apiKey },
      o.cwd,
    ),
  );
  try {
    await Promise.all(children.map((c) => c.next('ready')));
    const ticks = machineTicks();
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    for (const c of children) c.send('go');
    await until(`the mock recorded ${n} events`, () => ctx.tap.recorded >= n, 180_000, 2);
    const seconds = (ctx.tap.lastRecordedAt - t0) / 1000;
    const used = process.cpuUsage(cpu);
    const busy = busyShare(ticks, machineTicks());
    for (const c of children) c.send('close');
    const closed = await Promise.all(children.map((c) => c.next('closed')));
    return {
      relays,
      delayMs,
      events: n,
      seconds,
      rate: n / seconds,
      recorded: ctx.tap.recorded,
      received: ctx.tap.arrivals.size,
      posts: ctx.tap.posts,
      repeated: ctx.tap.repeated(),
      left: await rowsIn(ctx.pool, table),
      table: await tableStats(ctx.pool, table),
      unsent: closed.reduce((s, m) => s + m.unsent, 0),
      /** CPU per event, µs: the relay processes (from `go` to `close`), this process (the mock). */
      relayCpuUs: (closed.reduce((s, m) => s + m.cpuMs, 0) * 1000) / n,
      mockCpuUs: (used.user + used.system) / n,
      busy,
      problems: closed.flatMap((m) => [...m.errors, ...m.deadLetters]).slice(0, 3),
    };
  } finally {
    ctx.mock.faults.clear();
    for (const c of children) c.kill();
  }
}

/** One idle relay on `driver`; events committed here one at a time: commit → received at the mock. */
async function latencyRun(o, ctx, driver) {
  const table = `bench_latency_${driver === 'pg' ? 'pg' : 'pgjs'}_${randomUUID().slice(0, 8)}`;
  // The committing side: the spool's appendIn, the very statement `track(…, { transaction })` runs,
  // from a spool with no tracker on it, so that the relay process is the only sender.
  const spool = ctx.postgresSpool(ctx.pool, { table });
  await spool.open();
  const relay = startRelay(
    { driver, table, url: ctx.url, baseUrl: ctx.mock.baseUrl, apiKey: ctx.mock.apiKey },
    o.cwd,
  );
  try {
    await relay.next('ready');
    relay.send('go');
    await relay.next('started');
    await sleep(300);
    ctx.tap.reset();
    const committed = [];
    for (let i = 0; i < LATENCY.warmup + LATENCY.events; i++) {
      const event = spooled(i);
      const client = await ctx.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query("INSERT INTO bench_exports (n, driver) VALUES ($1, 'latency')", [i]);
        await spool.appendIn(client, [event]);
        await client.query('COMMIT');
        committed.push({ key: event.event_key, at: performance.now() });
      } finally {
        client.release();
      }
      await sleep(LATENCY.spacingMs);
    }
    await until('every committed event received', () => ctx.tap.arrivals.size >= committed.length, 15_000);
    const delays = committed.slice(LATENCY.warmup).map((c) => ctx.tap.arrivals.get(c.key)[0] - c.at);
    relay.send('close');
    const closed = await relay.next('closed');
    return {
      driver,
      delays,
      events: committed.length,
      repeated: ctx.tap.repeated(),
      unsent: closed.unsent,
      left: await rowsIn(ctx.pool, table),
      problems: [...closed.errors, ...closed.deadLetters].slice(0, 3),
    };
  } finally {
    relay.kill();
    await spool.close();
  }
}

/** Versions of the drivers (the repo's node_modules) and of the server. */
async function driverVersions(cwd, pool) {
  const read = (pkg) => {
    try {
      return JSON.parse(readFileSync(join(cwd, '..', 'node_modules', pkg, 'package.json'), 'utf8')).version;
    } catch {
      return 'not installed';
    }
  };
  const { rows } = await pool.query('SHOW server_version');
  return { PostgreSQL: rows[0].server_version, pg: read('pg'), 'postgres (postgres.js)': read('postgres') };
}

/**
 * @param {object} o
 * @param {string} o.cwd
 * @param {(msg: string) => void} o.log
 * @param {number} o.events  outbox rows for the relay part
 * @param {Set<string>} o.skip
 */
export async function runPostgres(o) {
  const data = {
    events: o.events,
    txcost: [],
    relay: [],
    latency: [],
    inbox: null,
    failures: {},
    versions: {},
  };
  const { child, attempt } = modeRunner({ ...o, port: 0, script: childPath, failures: data.failures });
  // Loaded only now: run.mjs imports this file in every mode, before it builds dist/.
  const { postgresSpool } = await import('billing-sdk/postgres');
  const { startMockServer } = await import('billing-sdk/testing');
  const { default: pg } = await import('pg');
  const cluster = await startPostgres();
  const mock = await startMockServer();
  const tap = tapMock(mock);
  const pool = new pg.Pool({ connectionString: cluster.url, max: 10 });
  pool.on('error', () => {});
  const ctx = { url: cluster.url, mock, tap, pool, postgresSpool };
  const common = { url: cluster.url, baseUrl: mock.baseUrl, apiKey: mock.apiKey };
  try {
    data.versions = await driverVersions(o.cwd, pool);
    o.log(`PostgreSQL ${data.versions.PostgreSQL} on 127.0.0.1:${cluster.port} (a cluster of the run's own)`);
    await pool.query(
      'CREATE TABLE bench_exports (n int NOT NULL, driver text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
    );

    await attempt('txcost', async () => {
      for (const driver of POSTGRES_DRIVERS) {
        tap.reset();
        const table = `bench_txcost_${driver === 'pg' ? 'pg' : 'pgjs'}`;
        const r = await child(
          { kind: 'txcost', driver, table, ...common, ...TXCOST },
          180_000,
          `txcost ${driver}`,
        );
        const check = {
          tracked: r.tracked,
          received: tap.arrivals.size,
          recorded: tap.recorded,
          repeated: tap.repeated(),
        };
        data.txcost.push({ driver, ...r, check });
        o.log(
          `txcost ${driver}: p50 ${fmtNs(r.withTrack.fast.p50)} without, ${fmtNs(r.withTrack.slow.p50)} with track ` +
            `(${fmtNs(r.statementOnly.slow.p50)} with its statement alone vs ${fmtNs(r.statementOnly.fast.p50)}); ` +
            `${fmtInt(r.tracked)} tracked, ${fmtInt(check.recorded)} recorded`,
        );
      }
    });
    await attempt('relay', async () => {
      const cases = [
        ...RELAYS.map((relays) => [relays, o.events, 0]),
        ...RELAYS.map((relays) => [relays, SLOW_SERVICE.events, SLOW_SERVICE.delayMs]),
      ];
      for (const [relays, n, delayMs] of cases) {
        const r = await relayRun(o, ctx, relays, n, delayMs);
        data.relay.push(r);
        o.log(
          `relay ×${relays}${delayMs ? `, service answering after ${delayMs} ms` : ''}: ${fmtInt(r.events)} events in ${fmtNum(r.seconds, 2)} s: ${fmtInt(r.rate)} events/s; ` +
            `CPU per event: relays ${fmtInt(r.relayCpuUs)} µs, mock ${fmtInt(r.mockCpuUs)} µs; machine ` +
            `${fmtInt(r.busy * 100)} % busy; ${fmtInt(r.posts)} POSTs, ${r.repeated} keys twice, ${r.left} rows left, ` +
            `${fmtInt(r.table?.updated)} row updates (claims and renewals)`,
        );
      }
    });
    await attempt('latency', async () => {
      for (const driver of POSTGRES_DRIVERS) {
        const r = await latencyRun(o, ctx, driver);
        data.latency.push(r);
        const d = distribution(Float64Array.from(r.delays));
        o.log(
          `latency (relay on ${driver}): p50 ${fmtNum(d.p50, 1)} ms, p99 ${fmtNum(d.p99, 1)} ms, max ${fmtNum(d.max, 1)} ms`,
        );
      }
    });
    await attempt('inbox', async () => {
      const r = await child({ kind: 'inbox', ...common, ...INBOX }, 180_000, 'inbox');
      data.inbox = r;
      o.log(
        `inbox: postgresDedupeStore ${fmtInt(median(r.perBlock.postgres))}, memory ${fmtInt(median(r.perBlock.memory))} deliveries/s`,
      );
    });
  } finally {
    await pool.end();
    await mock.close();
    await cluster.stop();
  }
  return data;
}

/** Everything the report shows. @param {Awaited<ReturnType<typeof runPostgres>>} data */
export function summarizePostgres(data) {
  const goals = [];
  const f = data.failures;
  const txcost = data.txcost.map((r) => ({
    driver: r.driver,
    with: r.withTrack.slow,
    without: r.withTrack.fast,
    ratio: stats(r.withTrack.blockRatios),
    addedP50Ms: (r.withTrack.slow.p50 - r.withTrack.fast.p50) / 1e6,
    addedMeanMs: (r.withTrack.slow.mean - r.withTrack.fast.mean) / 1e6,
    statement: r.statementOnly.slow,
    statementWithout: r.statementOnly.fast,
    statementRatio: stats(r.statementOnly.blockRatios),
    statementAddedP50Ms: (r.statementOnly.slow.p50 - r.statementOnly.fast.p50) / 1e6,
    check: r.check,
    ok: r.check.received === r.tracked && r.check.recorded === r.tracked && r.check.repeated === 0,
  }));
  for (const t of txcost) {
    goals.push({
      ok: null,
      text:
        `${DRIVER_LABEL[t.driver]}: \`track(…, { transaction })\` adds ${fmtNum(t.addedP50Ms, 2)} ms at p50 ` +
        `(${fmtNum(t.without.p50 / 1e6, 2)} → ${fmtNum(t.with.p50 / 1e6, 2)} ms), ${fmtNum(t.addedMeanMs, 2)} ms on ` +
        `average; transaction time with ÷ without ${fmtRatio(t.ratio)}, the tracker relaying in the same process; ` +
        `its statement alone (no relay in the process) adds ${fmtNum(t.statementAddedP50Ms, 2)} ms at p50 (no goal set)`,
    });
    goals.push({
      ok: t.ok,
      text:
        `${DRIVER_LABEL[t.driver]}: every tracked event of the timed transactions recorded once: ` +
        `${fmtInt(t.check.recorded)} recorded, ${fmtInt(t.check.received)} keys received for ${fmtInt(t.check.tracked)} tracked, ` +
        `${t.check.repeated} received twice`,
    });
  }
  if (f.txcost) goals.push({ ok: false, text: `transaction cost failed: ${firstLine(f.txcost)}` });
  const relay = data.relay.map((r) => ({
    ...r,
    ok:
      r.recorded === r.events &&
      r.received === r.events &&
      r.repeated === 0 &&
      r.left === 0 &&
      r.unsent === 0,
  }));
  for (const r of relay) {
    goals.push({
      ok: r.ok,
      text:
        `${r.relays === 1 ? '1 relay' : `${r.relays} relays`}${r.delayMs ? `, the mock answering after ${r.delayMs} ms` : ''}: ` +
        `${fmtInt(r.rate)} events/s from the outbox to the ` +
        `mock (${fmtInt(r.events)} events in ${fmtNum(r.seconds, 2)} s); each key received once: ` +
        `${fmtInt(r.received)} keys, ${fmtInt(r.posts)} POSTs, ${r.repeated} twice, ${r.left} rows left (no throughput goal set)`,
    });
  }
  if (f.relay) goals.push({ ok: false, text: `relay throughput failed: ${firstLine(f.relay)}` });
  const latency = data.latency.map((r) => ({
    ...r,
    d: distribution(Float64Array.from(r.delays)),
  }));
  for (const r of latency) {
    goals.push({
      ok: r.d.p99 <= POSTGRES_LATENCY_GOAL_MS && r.repeated === 0 && r.left === 0,
      text:
        `commit → send, one idle relay on ${DRIVER_LABEL[r.driver]}: p50 ${fmtNum(r.d.p50, 1)} ms, p99 ` +
        `${fmtNum(r.d.p99, 1)} ms, max ${fmtNum(r.d.max, 1)} ms (${r.d.n} events, NOTIFY with the default ` +
        `5 s poll; goal p99 ≤ ${POSTGRES_LATENCY_GOAL_MS} ms on loopback)`,
    });
  }
  if (f.latency) goals.push({ ok: false, text: `commit → send latency failed: ${firstLine(f.latency)}` });
  let inbox = null;
  if (data.inbox) {
    const r = data.inbox;
    const ratios = r.perBlock.postgres.map((x, i) => x / r.perBlock.memory[i]);
    inbox = {
      postgres: stats(r.perBlock.postgres),
      memory: stats(r.perBlock.memory),
      ratio: stats(ratios),
      rowsOk: ['postgres', 'memory'].every(
        (v) => r.rows[v].n === r.events[v] && r.rows[v].distinct === r.events[v],
      ),
      allOk: Object.entries(r.statuses).every(([k]) => k.endsWith(' 200')),
    };
    goals.push({
      ok: null,
      text:
        `inbox: ${fmtInt(inbox.postgres.median)} deliveries/s with \`postgresDedupeStore\` and the row written through ` +
        `\`{ transaction }\` vs ${fmtInt(inbox.memory.median)} with the memory store and the row on the pool: ` +
        `${fmtRatio(inbox.ratio)} (${INBOX.concurrency} in flight; no goal set)`,
    });
    goals.push({
      ok: inbox.rowsOk && inbox.allOk,
      text:
        `inbox: one app row per event: ${fmtInt(r.rows.postgres.n)} rows for ${fmtInt(r.events.postgres)} events ` +
        `(${fmtInt(r.duplicates.postgres)} delivered twice) with the Postgres store; ${fmtInt(r.rows.memory.n)} for ` +
        `${fmtInt(r.events.memory)} (${fmtInt(r.duplicates.memory)} twice) with memory; answers ` +
        Object.entries(r.statuses)
          .map(([k, n]) => `${k}: ${fmtInt(n)}`)
          .join(', '),
    });
  } else if (f.inbox) {
    goals.push({ ok: false, text: `inbox failed: ${firstLine(f.inbox)}` });
  }
  return { goals, txcost, relay, latency, inbox };
}

const msNs = (x) => `${fmtNum(x / 1e6, 2)} ms`;

/**
 * The section, markers included.
 * @param {Awaited<ReturnType<typeof runPostgres>>} data
 * @param {ReturnType<typeof summarizePostgres>} summary
 * @param {object} meta
 */
export function renderPostgresMarkdown(data, summary, meta) {
  const v = data.versions;
  const out = sectionHead({
    name: 'postgres',
    title: 'Usage and webhooks in PostgreSQL',
    about:
      `\`billing-sdk/postgres\` from the built package on a PostgreSQL ${v.PostgreSQL ?? ''} cluster of the run's own ` +
      "(started by `test/postgres/cluster-server.mjs`, the tests' harness: `initdb` in a temp dir, loopback, " +
      '`fsync=off`, `synchronous_commit` on), node-postgres as the driver (postgres.js as well where named); the ' +
      "service is the SDK's mock (`billing-sdk/testing`) in the bench's own process, over loopback HTTP. The 2 " +
      'cores run the bench, PostgreSQL and the relays together, and may be shared with other jobs (the load ' +
      'average below; the relay table shows how busy the machine was while measured).',
    goals: summary.goals,
    meta,
  });

  if (summary.txcost.length) {
    out.push('### What `track(…, { transaction })` adds to a transaction', '');
    out.push(
      mdTable(
        [
          'driver',
          'transaction',
          'n',
          'mean',
          'p50',
          'p99',
          'max',
          'with ÷ without (median of block pairs, min–max)',
        ],
        summary.txcost.flatMap((t) => {
          const row = (label, d, ratio) => [
            DRIVER_LABEL[t.driver],
            label,
            fmtInt(d.n),
            msNs(d.mean),
            msNs(d.p50),
            msNs(d.p99),
            msNs(d.max),
            ratio,
          ];
          return [
            row('without `track`', t.without, '1'),
            row('with `track` inside (tracker relaying in the process)', t.with, fmtRatio(t.ratio)),
            row('without (second run)', t.statementWithout, '1'),
            row(
              "with track's statement alone (`appendIn`, no relay here)",
              t.statement,
              fmtRatio(t.statementRatio),
            ),
          ];
        }),
      ),
      '',
      `One fresh child per driver (\`bench/postgres-child.mjs\`). The transaction: node-postgres \`pool.connect()\`, ` +
        "`BEGIN`, `INSERT INTO bench_exports (n, driver) VALUES ($1, 'pg')`, [`await tracker.track(event, { transaction: " +
        'client })`], `COMMIT`, `release()`; postgres.js `sql.begin(async (tx) => …)` with the same INSERT as a tagged ' +
        'template and [`await tracker.track(event, { transaction: tx })`]. After ' +
        `${TXCOST.warmupMs / 1000} s of untimed warm-up of both, ${TXCOST.blocks} alternating blocks of ${TXCOST.calls} ` +
        `transactions with \`track\` then ${TXCOST.calls} without, one at a time, each timed from the start of the call ` +
        'to its resolution (`process.hrtime.bigint()`). The tracker (default options, `postgresSpool(db, { table })`) ' +
        'runs in the same process, as it would in the app: its relay claims, sends and deletes each committed event ' +
        "meanwhile (woken by the insert's NOTIFY), so the “with” figure includes that work competing for the same event " +
        'loop and the same 2 cores, the way an app instance that is also a relay pays it. After the blocks the tracker ' +
        'was flushed and closed, and the mock counted every tracked event of the child (warm-up included) received ' +
        'once. Then, to separate the statement from the relay, a second run in the same child (half the blocks): the ' +
        "same transaction with only the statement `track` runs in it (the spool's `appendIn(tx, [event])`: one " +
        '`INSERT … RETURNING` with its `pg_notify`), on a spool of its own with no tracker, so nothing in the process ' +
        'relays; its events stay in that table.',
      '',
    );
  }

  if (summary.relay.length) {
    out.push('### Relay throughput', '');
    out.push(
      mdTable(
        [
          'relays',
          'service answers after',
          'events',
          'seconds',
          'events/s',
          'relay CPU per event (all relays)',
          "mock's CPU per event",
          'machine busy',
          'POSTs',
          'keys received twice',
          'row updates (claims, renewals)',
          'rows left',
        ],
        summary.relay.map((r) => [
          String(r.relays),
          r.delayMs ? `${r.delayMs} ms` : 'at once',
          fmtInt(r.events),
          fmtNum(r.seconds, 2),
          fmtInt(r.rate),
          `${fmtInt(r.relayCpuUs)} µs`,
          `${fmtInt(r.mockCpuUs)} µs`,
          Number.isFinite(r.busy) ? `${fmtInt(r.busy * 100)} %` : '–',
          fmtInt(r.posts),
          String(r.repeated),
          fmtInt(r.table?.updated),
          String(r.left),
        ]),
      ),
      '',
      `${fmtInt(data.events)} events (\`--events\`) written into a fresh outbox table first (the spool's own INSERT, ` +
        `${fmtInt(FILL_BATCH)} events a statement), then 1 relay process, or 3 at once, each a tracker with default ` +
        'options (concurrency 8, `claimTtlMs` 30 s) on `postgresSpool(pool, { table })` with node-postgres, started and ' +
        'connected before the clock starts. Time from the line `go` (each makes its tracker: the spool opens, claims ' +
        'rows `FOR UPDATE SKIP LOCKED`, sends each with `billing.usage.record`, deletes what was acknowledged) until the ' +
        "mock's store recorded the last new event. Each event is one POST (no aggregation). The mock runs in the " +
        'parent, PostgreSQL and the relays share the same 2 cores: the figure is what this machine does with all ' +
        "of them on it, not the relay alone. CPU per event: the relay processes' own `process.cpuUsage()` from " +
        "`go` to `close` (the close included), and this process's (the mock serving the POSTs) over the window, " +
        'each ÷ the events; machine busy: the share of both cores not idle over the window (`/proc/stat`: every ' +
        'process, PostgreSQL and other jobs on the machine included). Checked after: every key received by the ' +
        'mock exactly once, the table empty, nothing unsent at close; row updates: `n_tup_upd` of the outbox ' +
        "table in PostgreSQL's statistics (a claim updates each row it takes, a lease renewal each row held): " +
        'equal to the events when no row was claimed twice. Each relay process pays its own warm-up (V8 compiling ' +
        'the client on its first requests), a cost 3 processes pay three times over the same events. The last two ' +
        `rows: the same with the mock answering each POST after ${SLOW_SERVICE.delayMs} ms (its \`delayMs\` fault), as ` +
        `a service across a network would, on ${fmtInt(SLOW_SERVICE.events)} events: there one relay (8 in flight) ` +
        `can send at most 8 ÷ ${SLOW_SERVICE.delayMs} ms = ${fmtInt(8000 / SLOW_SERVICE.delayMs)} events/s, and 3 relays ` +
        'three times that as far as the CPU lets them.',
      '',
    );
  }

  if (summary.latency.length) {
    out.push('### Commit → send latency', '');
    out.push(
      mdTable(
        ['relay on', 'events', 'p50', 'p99', 'max', 'mean'],
        summary.latency.map((r) => [
          DRIVER_LABEL[r.driver],
          String(r.d.n),
          `${fmtNum(r.d.p50, 1)} ms`,
          `${fmtNum(r.d.p99, 1)} ms`,
          `${fmtNum(r.d.max, 1)} ms`,
          `${fmtNum(r.d.mean, 1)} ms`,
        ]),
      ),
      '',
      'One relay process (a tracker on `postgresSpool`, default options: `pollMs` 5 000, so an event is picked up ' +
        "by the NOTIFY its insert sends at commit, on the relay's LISTEN connection; a lost notification would show as " +
        'seconds), idle and started before. This process commits one event at a time: node-postgres `BEGIN`, an ' +
        "`INSERT` into `bench_exports`, the spool's `appendIn(client, [event])` (the statement `track(…, { " +
        'transaction })` runs: the INSERT and its NOTIFY; called here on a spool without a tracker, so the relay is ' +
        `the only sender), \`COMMIT\`; then ${LATENCY.spacingMs} ms of pause. ${LATENCY.warmup} events first, not ` +
        `counted, then ${LATENCY.events} measured. A latency is when the mock received the POST (its request log ` +
        "hook, in this process) − when this process's `COMMIT` resolved: one clock, `performance.now()`. " +
        'Every key was received once and the table was empty after.',
      '',
    );
  }

  if (summary.inbox) {
    const s = summary.inbox;
    const r = data.inbox;
    out.push('### Webhook inbox throughput', '');
    out.push(
      mdTable(
        ['dedupe store', "onEvent's write", 'deliveries/s (median of blocks, min–max)', '÷ memory'],
        [
          [
            '`postgresDedupeStore(pool)`',
            'through `{ transaction }`: commits with the done mark',
            `${fmtInt(s.postgres.median)} (${fmtInt(s.postgres.min)}–${fmtInt(s.postgres.max)})`,
            fmtRatio(s.ratio),
          ],
          [
            'memory (default)',
            '`pool.query(…)`',
            `${fmtInt(s.memory.median)} (${fmtInt(s.memory.min)}–${fmtInt(s.memory.max)})`,
            '1',
          ],
        ],
      ),
      '',
      'One fresh child (`bench/postgres-child.mjs`), a node-postgres `Pool` of 20. Two handlers from ' +
        '`createWebhookHandler`: one with `dedupe: postgresDedupeStore(pool)` whose `onEvent(event, { transaction })` ' +
        'inserts one row (event id, account) into an app table through `transaction.query`, one with the default ' +
        'memory store whose `onEvent` inserts the same row with `pool.query`. Each delivery is a Fetch `Request` ' +
        `(a lifecycle event's JSON) handed to the handler in process (no HTTP server): ${INBOX.concurrency} in flight. ` +
        `A block is ${fmtInt(r.deliveries)} deliveries of new events, every ${INBOX.duplicateEvery}th of which is ` +
        'delivered a second time 32 deliveries later (a redelivery: answered 200, not applied again); one untimed ' +
        `block of each, then ${INBOX.blocks} blocks of each alternating (the order swapped every block), the ratio taken ` +
        'per block pair. The app tables have no unique index: after the run every event has exactly one row.',
      '',
    );
  }
  out.push(
    '### Drivers and server',
    '',
    `PostgreSQL ${v.PostgreSQL ?? '–'}; pg ${v.pg ?? '–'}; postgres (postgres.js) ${v['postgres (postgres.js)'] ?? '–'}.`,
    '',
  );
  out.push(...sectionFoot('postgres', meta, ['billing-sdk']));
  return `${out.join('\n')}\n`;
}

/** A terminal summary. */
export function renderPostgresCompact(summary) {
  return `${['', 'Usage and webhooks in PostgreSQL:', ...compactGoals(summary.goals)].join('\n')}\n`;
}
