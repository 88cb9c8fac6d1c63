// billing-sdk/postgres on a PostgreSQL of the run's own (scripts/servers.mjs), the mock in this
// process: what `track(…, { transaction })` adds to a transaction (node-postgres and postgres.js);
// relay throughput from the outbox (1 and 3 relay processes); commit → send latency of an idle
// relay (NOTIFY); the webhook inbox with `postgresDedupeStore` vs the memory store.
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { BillingClient, createUsageTracker, createWebhookHandler } from 'billing-sdk';
import { postgresDedupeStore, postgresSpool } from 'billing-sdk/postgres';
import pg from 'pg';
import postgres from 'postgres';
import { killOnExit, startPostgres } from '../scripts/servers.mjs';
import { goal, isMain, median, quantile, r3, sleep, startMock, timeTasks } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'PostgreSQL';
export const how =
  "A PostgreSQL of the run's own (`scripts/servers.mjs`: initdb in a temp dir, fsync off), the mock in this process. Transactions (INSERT, COMMIT) timed by tinybench with and without `track(…, { transaction })`. Relays: 5,000 events appended to a fresh outbox, then 1 or 3 relay processes (a tracker on `postgresSpool`, defaults) started together; time until the mock recorded the last. Commit → send: one idle relay; 100 events committed one at a time with the spool's `appendIn`, the mock's store polled every ms. Inbox: 1,100 deliveries a block (every 10th a redelivery), 16 in flight, 4 blocks alternating.";

const RELAY_EVENTS = 5000;
const LATENCY_EVENTS = 100;
const METER = { product_code: 'api-gateway', meter_code: 'api_calls' };
const JSON_TYPE = { 'content-type': 'application/json' };
const usage = (account) => ({ account_ref_id: account, ...METER, quantity: 1 });

function database(driver, url, max = 10) {
  if (driver === 'pg') {
    const pool = new pg.Pool({ connectionString: url, max });
    pool.on('error', () => {});
    return { db: pool, end: () => pool.end() };
  }
  const sql = postgres(url, { max, onnotice: () => {} });
  return { db: sql, end: () => sql.end() };
}

const recordedKeys = (mock, account) =>
  mock.store.usageEvents.filter((e) => e.account_ref_id === account).length;

async function txCost(driver, url, mock) {
  const { db, end } = database(driver, url);
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
  const table = `bench_spool_${driver.replace(/\W/g, '')}`;
  const tracker = createUsageTracker(billing, { spool: postgresSpool(db, { table }) });
  const account = `acct_tx_${driver}`;
  await mock.lifecycle.subscribe({ account_ref_id: account });
  const create = 'CREATE TABLE IF NOT EXISTS bench_exports (n int, driver text)';
  let tracked = 0;
  const tasks =
    driver === 'pg'
      ? {
          without: async () => {
            const client = await db.connect();
            await client.query('BEGIN');
            await client.query("INSERT INTO bench_exports VALUES (1, 'pg')");
            await client.query('COMMIT');
            client.release();
          },
          with: async () => {
            const client = await db.connect();
            await client.query('BEGIN');
            await client.query("INSERT INTO bench_exports VALUES (1, 'pg')");
            await tracker.track(usage(account), { transaction: client });
            await client.query('COMMIT');
            client.release();
            tracked++;
          },
        }
      : {
          without: () => db.begin((tx) => tx`INSERT INTO bench_exports VALUES (1, 'postgres.js')`),
          with: async () => {
            await db.begin(async (tx) => {
              await tx`INSERT INTO bench_exports VALUES (1, 'postgres.js')`;
              await tracker.track(usage(account), { transaction: tx });
            });
            tracked++;
          },
        };
  await (driver === 'pg' ? db.query(create) : db.unsafe(create));
  tasks.with = { fn: tasks.with, off: () => tracker.flush() };
  const t = await timeTasks(tasks, { time: 1500, warmupTime: 300 });
  await tracker.flush();
  await tracker.close();
  await end();
  return { driver, without: t.without, with: t.with, tracked, recorded: recordedKeys(mock, account) };
}

/** A relay process: a tracker on postgresSpool once told `go`; closes when told `close`. */
async function relay({ driver, url, table, baseUrl, apiKey }) {
  const { db, end } = database(driver, url);
  const billing = new BillingClient({ apiKey, baseUrl, logLevel: 'off' });
  let tracker;
  process.on('message', async (m) => {
    if (m === 'go') tracker = createUsageTracker(billing, { spool: postgresSpool(db, { table }) });
    if (m === 'go') await tracker.flush();
    if (m === 'close') {
      const { unsent } = await tracker.close({ timeoutMs: 20_000 });
      await end();
      process.send({ unsent });
    }
  });
  process.send('ready');
}

function startRelays(n, options) {
  const children = Array.from({ length: n }, () =>
    killOnExit(fork(new URL(import.meta.url), [JSON.stringify(options)])),
  );
  const ready = Promise.all(children.map((c) => new Promise((resolve) => c.once('message', resolve))));
  const close = () =>
    Promise.all(children.map((c) => new Promise((resolve) => c.once('message', resolve).send('close'))));
  return {
    children,
    ready,
    close,
    go: () => {
      for (const c of children) c.send('go');
    },
  };
}

async function throughput(n, url, mock) {
  const table = `bench_outbox_${n}`;
  const account = `acct_relay_${n}`;
  await mock.lifecycle.subscribe({ account_ref_id: account });
  const { db, end } = database('pg', url);
  const spool = postgresSpool(db, { table });
  await spool.open();
  for (let i = 0; i < RELAY_EVENTS; i += 1000) {
    await spool.append(Array.from({ length: 1000 }, () => ({ ...usage(account), event_key: randomUUID() })));
  }
  await spool.close();
  const posts = () => mock.requests.count({ method: 'POST', path: '/api/usage/events/' });
  const relays = startRelays(n, { driver: 'pg', url, table, baseUrl: mock.baseUrl, apiKey: mock.apiKey });
  await relays.ready;
  const before = posts();
  const t0 = performance.now();
  relays.go();
  while (recordedKeys(mock, account) < RELAY_EVENTS) await sleep(5);
  const seconds = (performance.now() - t0) / 1000;
  await relays.close();
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${table}`);
  await end();
  const sent = posts() - before;
  return { relays: n, eventsPerSec: Math.round(RELAY_EVENTS / seconds), posts: sent, left: rows[0].n };
}

async function latency(driver, url, mock) {
  const table = `bench_latency_${driver.replace(/\W/g, '')}`;
  const account = `acct_latency_${driver.replace(/\W/g, '')}`;
  await mock.lifecycle.subscribe({ account_ref_id: account });
  const { db, end } = database('pg', url);
  const relays = startRelays(1, { driver, url, table, baseUrl: mock.baseUrl, apiKey: mock.apiKey });
  await relays.ready;
  relays.go();
  await sleep(500);
  // Appends as `track(…, { transaction })` does, on a spool without a tracker: the relay sends.
  const spool = postgresSpool(db, { table });
  await spool.open();
  const delays = [];
  for (let i = 0; i < LATENCY_EVENTS + 10; i++) {
    const event = { ...usage(account), event_key: randomUUID() };
    const client = await db.connect();
    await client.query('BEGIN');
    await spool.appendIn(client, [event]);
    await client.query('COMMIT');
    client.release();
    const t0 = performance.now();
    while (!mock.store.usageEvent(event.event_key)) await sleep(1);
    if (i >= 10) delays.push(performance.now() - t0);
    await sleep(15);
  }
  await relays.close();
  await spool.close();
  await end();
  const sorted = delays.sort((a, b) => a - b);
  return {
    driver,
    p50_ms: r3(quantile(sorted, 0.5)),
    p99_ms: r3(quantile(sorted, 0.99)),
    max_ms: r3(sorted.at(-1)),
  };
}

async function inbox(url) {
  const { db: pool, end } = database('pg', url, 20);
  const app = { postgres: 'bench_app_pg', memory: 'bench_app_mem' };
  for (const t of Object.values(app)) await pool.query(`CREATE TABLE ${t} (event_id text NOT NULL)`);
  const handlers = {
    postgres: createWebhookHandler({
      dedupe: postgresDedupeStore(pool, { table: 'bench_inbox' }),
      onEvent: (e, { transaction }) =>
        transaction.query(`INSERT INTO ${app.postgres} VALUES ($1)`, [e.transaction_id]),
    }),
    memory: createWebhookHandler({
      onEvent: (e) => pool.query(`INSERT INTO ${app.memory} VALUES ($1)`, [e.transaction_id]),
    }),
  };
  const bodies = () => {
    const out = [];
    for (let i = 0; i < 1000; i++) {
      const event = { event: 'subscription-created', transaction_id: `tx-${randomUUID()}`, is_active: true };
      const rest = { account_ref_id: 'acct_active', subscription_id: 'sub_1', label_name: 'pro' };
      out.push(JSON.stringify({ ...event, ...rest, timestamp: '2026-01-01T00:00:00Z' }));
      if (i % 10 === 9) out.push(out[out.length - 8]); // a redelivery, answered 200, not applied again
    }
    return out;
  };
  const rates = { postgres: [], memory: [] };
  let events = 0;
  for (let block = 0; block < 4; block++) {
    for (const variant of block % 2 ? ['memory', 'postgres'] : ['postgres', 'memory']) {
      const queue = bodies();
      events += 1000;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let body = queue.shift(); body; body = queue.shift()) {
            const res = await handlers[variant](
              new Request('http://app/webhooks', { method: 'POST', body, headers: JSON_TYPE }),
            );
            if (res.status !== 200) throw new Error(`${variant}: ${res.status}`);
          }
        }),
      );
      rates[variant].push(Math.round(1100 / ((performance.now() - t0) / 1000)));
    }
  }
  const rows = {};
  for (const [variant, t] of Object.entries(app)) {
    rows[variant] = (
      await pool.query(`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS d FROM ${t}`)
    ).rows[0];
  }
  await end();
  return { rates, rows, events: events / 2 };
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const mock = await startMock();
  const server = await startPostgres();
  const costs = [await txCost('pg', server.url, mock), await txCost('postgres.js', server.url, mock)];
  const relays = [await throughput(1, server.url, mock), await throughput(3, server.url, mock)];
  const latencies = [await latency('pg', server.url, mock), await latency('postgres.js', server.url, mock)];
  const box = await inbox(server.url);
  await server.stop();
  await mock.close();
  const goals = [
    ...costs.map((c) =>
      goal(
        `${c.driver}: track(…, { transaction }) in a transaction, the tracker relaying in the process`,
        `+${r3((c.with.p50 - c.without.p50) / 1000)} ms at p50 (${r3(c.without.p50 / 1000)} → ${r3(c.with.p50 / 1000)} ms); ${c.recorded} recorded of ${c.tracked} tracked`,
        'every tracked event recorded once',
        c.recorded === c.tracked,
      ),
    ),
    ...relays.map((r) =>
      goal(
        `${r.relays} relay${r.relays > 1 ? 's' : ''}: outbox → service`,
        `${r.eventsPerSec} events/s; ${r.posts} POSTs for ${RELAY_EVENTS} events, ${r.left} rows left`,
        'each event sent once, none left',
        r.posts === RELAY_EVENTS && r.left === 0,
      ),
    ),
    ...latencies.map((l) =>
      goal(
        `commit → send, one idle relay on ${l.driver}`,
        `p50 ${l.p50_ms} ms, p99 ${l.p99_ms} ms, max ${l.max_ms} ms`,
        'p99 ≤ 100 ms',
        l.p99_ms <= 100,
      ),
    ),
    goal(
      'webhook inbox, 16 in flight: postgresDedupeStore with the row in { transaction } vs memory',
      `${median(box.rates.postgres)} vs ${median(box.rates.memory)} deliveries/s (median of 4 blocks); app rows ${box.rows.postgres.n} and ${box.rows.memory.n} for ${box.events} events each`,
      'one row per event',
      box.rows.postgres.n === box.events &&
        box.rows.postgres.d === box.events &&
        box.rows.memory.d === box.events,
    ),
  ];
  return { goals, transactions: costs, relays, latencies, inbox: box };
}

if (isMain(import.meta)) await relay(JSON.parse(process.argv[2]));
