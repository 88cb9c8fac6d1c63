// One process of the postgres mode (bench/postgres.mjs, issue 27): `billing-sdk/postgres` from the
// built package on the run's own PostgreSQL cluster, sending to the SDK's mock in the parent over
// loopback. Usage: node postgres-child.mjs '{"kind":…,"url":…,"baseUrl":…,"apiKey":…,…}'
//
// Kinds measured in one go (prints one line `BENCH_RESULT {json}`, exits 1 with the error on stderr):
//   txcost {driver: pg|postgres.js, table, blocks, calls, warmupMs}
//          the app's transaction (BEGIN; INSERT INTO bench_exports …; COMMIT) with and without
//          `await tracker.track(event, { transaction })` inside, alternating blocks, each timed; the
//          tracker (on postgresSpool, in this process, as an app instance runs it) relays meanwhile;
//          flushed at the end. Then the same with only the statement track runs (the spool's
//          appendIn, on a spool without a tracker: no relay here): {withTrack, statementOnly, tracked}
//   inbox  {blocks, deliveries, concurrency, duplicateEvery}
//          webhook deliveries through createWebhookHandler, `concurrency` in flight: with
//          postgresDedupeStore(pool) and onEvent inserting one app row through `{ transaction }`, vs the
//          default memory store with the insert on the pool, in alternating blocks; each event once
//          plus a share delivered twice; then the app rows counted
// A long-lived relay (kind `relay`, {driver, table}): prints {"type":"ready"} once connected; on the
// line `go`, makes a tracker on postgresSpool (default options: the relay) and prints
// {"type":"started"} once its spool is open; on `close`, closes it and prints {"type":"closed", unsent,
// cpuMs (this process's CPU from `go` to `close`), errors, deadLetters}, then exits.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { BillingClient, createUsageTracker, createWebhookHandler } from 'billing-sdk';
import { postgresDedupeStore, postgresSpool } from 'billing-sdk/postgres';
import pg from 'pg';
import postgres from 'postgres';
import { comparePerCall, ns } from './percall.mjs';
import { METER, reportAndExit } from './shared.mjs';

const o = JSON.parse(process.argv[2] ?? '{}');
const print = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** A usage event of the mock's demo data (a postpaid meter on an active account). */
const usage = (n) => ({ account_ref_id: 'acct_active', ...METER, quantity: 1, metadata: { n } });

/** The application's database handle, as it would make one. */
function database(driver, max) {
  if (driver === 'postgres.js') {
    const sql = postgres(o.url, { max, onnotice: () => {} });
    return { db: sql, sql, end: () => sql.end({ timeout: 1 }) };
  }
  const pool = new pg.Pool({ connectionString: o.url, max });
  pool.on('error', () => {});
  return { db: pool, pool, end: () => pool.end() };
}

/** A tracker on postgresSpool(db, spoolOptions), sending to the mock; what went wrong is collected. */
function trackerOn(db, spoolOptions) {
  const billing = new BillingClient({ baseUrl: o.baseUrl, apiKey: o.apiKey, logLevel: 'off' });
  const errors = [];
  const deadLetters = [];
  const tracker = createUsageTracker(billing, {
    spool: postgresSpool(db, spoolOptions),
    onError: (error) => errors.push(String(error?.message ?? error)),
    onDeadLetter: (event, reason) => deadLetters.push(`${event.event_key}: ${reason.type}`),
  });
  return { tracker, errors, deadLetters };
}

async function txcost() {
  const { db, pool, sql, end } = database(o.driver, 10);
  const { tracker, errors, deadLetters } = trackerOn(db, { table: o.table });
  await tracker.flush(); // opens the spool: the table exists from here
  // The statement alone: `track(…, { transaction })` is this spool method on the tracker's spool;
  // called on a spool of its own with no tracker (nothing relays in this process for it).
  const bare = postgresSpool(db, { table: `${o.table}_bare` });
  await bare.open();
  let n = 0;
  let tracked = 0;
  /** The app's transaction; `inside(transaction, n)` in it when given. */
  const transaction = sql
    ? (inside) =>
        sql.begin(async (tx) => {
          const at = ++n;
          await tx`INSERT INTO bench_exports (n, driver) VALUES (${at}, 'postgres.js')`;
          if (inside) await inside(tx, at);
        })
    : async (inside) => {
        const client = await pool.connect();
        try {
          const at = ++n;
          await client.query('BEGIN');
          await client.query("INSERT INTO bench_exports (n, driver) VALUES ($1, 'pg')", [at]);
          if (inside) await inside(client, at);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      };
  const track = async (tx, at) => {
    await tracker.track(usage(at), { transaction: tx });
    tracked++;
  };
  const append = (tx, at) => bare.appendIn(tx, [{ ...usage(at), event_key: randomUUID() }]);
  const blocks = { blocks: o.blocks, slowCalls: o.calls, fastCalls: o.calls, warmupMs: o.warmupMs };
  const withTrack = await comparePerCall({
    slow: () => transaction(track),
    fast: () => transaction(null),
    ...blocks,
  });
  await tracker.flush();
  const { unsent } = await tracker.close({ timeoutMs: 20_000 });
  if (errors.length || deadLetters.length || unsent)
    throw new Error(
      `tracker: ${unsent} unsent, errors ${errors.slice(0, 2)}, dead ${deadLetters.slice(0, 2)}`,
    );
  const statementOnly = await comparePerCall({
    slow: () => transaction(append),
    fast: () => transaction(null),
    ...blocks,
    blocks: Math.max(2, Math.round(o.blocks / 2)),
    warmupMs: 500,
  });
  await bare.close();
  await end();
  return { withTrack, statementOnly, tracked };
}

/** A lifecycle event as the service sends it, with a fresh id. */
const webhookEvent = () => ({
  event: 'subscription-created',
  transaction_id: `tx-${randomUUID()}`,
  account_ref_id: 'acct_active',
  subscription_id: 'sub_bench',
  is_active: true,
  label_name: 'pro',
  timestamp: '2026-01-01T00:00:00Z',
});

async function inbox() {
  const pool = new pg.Pool({ connectionString: o.url, max: 20 });
  pool.on('error', () => {});
  const suffix = randomUUID().replaceAll('-', '').slice(0, 8);
  const tables = { postgres: `bench_inbox_app_pg_${suffix}`, memory: `bench_inbox_app_mem_${suffix}` };
  for (const t of Object.values(tables))
    await pool.query(`CREATE TABLE ${t} (event_id text NOT NULL, account text NOT NULL)`);
  const handlers = {
    postgres: createWebhookHandler({
      dedupe: postgresDedupeStore(pool, { table: `bench_inbox_${suffix}` }),
      onEvent: (e, { transaction }) =>
        transaction.query(`INSERT INTO ${tables.postgres} VALUES ($1, $2)`, [
          e.transaction_id,
          e.account_ref_id,
        ]),
    }),
    memory: createWebhookHandler({
      onEvent: (e) =>
        pool.query(`INSERT INTO ${tables.memory} VALUES ($1, $2)`, [e.transaction_id, e.account_ref_id]),
    }),
  };
  const events = { postgres: 0, memory: 0 };
  const duplicates = { postgres: 0, memory: 0 };
  const statuses = {};
  /** One block: `o.deliveries` new events, every `duplicateEvery`-th delivered again 32 deliveries later. */
  const block = async (variant) => {
    const bodies = [];
    const sent = [];
    for (let i = 0; bodies.length < o.deliveries; i++) {
      const body = JSON.stringify(webhookEvent());
      sent.push(body);
      bodies.push(body);
      events[variant]++;
      if (i >= 32 && (i - 32) % o.duplicateEvery === 0 && bodies.length < o.deliveries) {
        bodies.push(sent[i - 32]);
        duplicates[variant]++;
      }
    }
    let next = 0;
    const t0 = ns();
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++];
          const res = await handlers[variant](
            new Request('http://127.0.0.1/webhooks/billing', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body,
            }),
          );
          const key = `${variant} ${res.status}`;
          statuses[key] = (statuses[key] ?? 0) + 1;
          await res.arrayBuffer();
        }
      }),
    );
    return bodies.length / (Number(ns() - t0) / 1e9);
  };
  // Warm-up of both (its events counted like the others).
  await block('postgres');
  await block('memory');
  const perBlock = { postgres: [], memory: [] };
  for (let b = 0; b < o.blocks; b++) {
    const order = b % 2 ? ['memory', 'postgres'] : ['postgres', 'memory'];
    for (const variant of order) perBlock[variant].push(await block(variant));
  }
  const rows = {};
  for (const [variant, t] of Object.entries(tables)) {
    const { rows: r } = await pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS distinct FROM ${t}`,
    );
    rows[variant] = r[0];
  }
  await pool.end();
  return { perBlock, events, duplicates, statuses, rows, deliveries: o.deliveries };
}

async function relay() {
  const { db, end } = database(o.driver, 10);
  if (o.driver === 'postgres.js') await db`SELECT 1`;
  else await db.query('SELECT 1');
  print({ type: 'ready' });
  let made;
  let cpu;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'go') {
      cpu = process.cpuUsage();
      made = trackerOn(db, { table: o.table });
      await made.tracker.flush();
      print({ type: 'started' });
    } else if (line === 'close') {
      const used = cpu && process.cpuUsage(cpu);
      const cpuMs = used ? (used.user + used.system) / 1000 : 0;
      const { unsent } = made ? await made.tracker.close({ timeoutMs: 20_000 }) : { unsent: 0 };
      await end();
      print({
        type: 'closed',
        unsent,
        cpuMs,
        errors: made?.errors ?? [],
        deadLetters: made?.deadLetters ?? [],
      });
      process.exit(0);
    }
  }
}

if (o.kind === 'relay') {
  relay().catch((error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  });
} else {
  reportAndExit(Promise.resolve().then(() => ({ txcost, inbox })[o.kind]()));
}
