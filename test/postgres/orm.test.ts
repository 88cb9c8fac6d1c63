import { randomUUID } from 'node:crypto';
import { sql as drizzleSql, type SQL } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingClient, createUsageTracker, type UsageTracker } from '../../src/index.js';
import { postgresSpool } from '../../src/postgres/index.js';
import { useMockServer } from '../helpers.js';
import { usePostgres } from './cluster.js';
import { holdsFor, until } from './poll.js';

// Kysely and Drizzle run the application's transaction; track takes that transaction as it is (a
// Kysely `trx`, a Drizzle `tx` on node-postgres or postgres.js): the event is one INSERT of it,
// recorded once the transaction commits and never when it rolls back.

const cluster = usePostgres();
const mock = useMockServer();
let pool: pg.Pool;
let sql: postgres.Sql;
const trackers: UsageTracker[] = [];

interface Database {
  orm_exports: { id: string };
}

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url });
  // node-postgres asks every pool for one: an idle client whose connection ends (a test kills
  // backends, the cluster stops at the end) is an 'error' event of the pool, unheard a crash.
  pool.on('error', () => {});
  sql = postgres(cluster.cluster.url, { onnotice: () => {} });
  await pool.query('CREATE TABLE IF NOT EXISTS orm_exports (id text PRIMARY KEY)');
});
afterAll(async () => {
  for (const tracker of trackers) await tracker.close({ timeoutMs: 0 }).catch(() => {});
  await Promise.all([pool?.end(), sql?.end()]);
});

const event = (quantity: number) => ({
  account_ref_id: 'acct_active',
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  quantity,
});
const recordedTimes = (key: string) =>
  mock.server.store.usageEvents.filter((e) => e.event_key === key).length;
const exported = async (id: string) =>
  (await pool.query('SELECT 1 FROM orm_exports WHERE id = $1', [id])).rowCount === 1;

async function usageTracker(db: unknown): Promise<UsageTracker> {
  const tracker = createUsageTracker(
    new BillingClient({ baseUrl: mock.server.baseUrl, apiKey: mock.server.apiKey }),
    { spool: postgresSpool(db, { table: `orm_${randomUUID().slice(0, 8)}` }) },
  );
  trackers.push(tracker);
  await tracker.flush();
  return tracker;
}

/**
 * Runs a committed and a rolled-back unit of work, each tracking an event inside its transaction
 * (`tracked` hears the key track resolved with): the committed one's row and event recorded once,
 * the rolled-back one's neither, though track had resolved for it.
 */
async function commitAndRollBack(
  run: (id: string, quantity: number, fail: boolean, tracked: (key: string) => void) => Promise<unknown>,
): Promise<void> {
  const committedId = randomUUID();
  let committed = '';
  await run(committedId, 2, false, (key) => {
    committed = key;
  });
  let rolledBack = '';
  const rolledBackId = randomUUID();
  await expect(
    run(rolledBackId, 3, true, (key) => {
      rolledBack = key;
    }),
  ).rejects.toThrow();
  expect(rolledBack).not.toBe(''); // track resolved inside the transaction that then rolled back
  expect(await exported(committedId)).toBe(true);
  expect(await exported(rolledBackId)).toBe(false);
  await until('the committed event recorded', () => recordedTimes(committed) === 1, 5_000);
  await holdsFor(
    'the committed event once, the rolled-back one never',
    () => recordedTimes(committed) === 1 && recordedTimes(rolledBack) === 0,
    200,
  );
}

/** In a Drizzle transaction (either driver's): the export's row and its usage, rolled back with `fail`. */
async function drizzleExport(
  tx: { execute(query: SQL): PromiseLike<unknown>; rollback(): never },
  tracker: UsageTracker,
  id: string,
  quantity: number,
  fail: boolean,
  tracked: (key: string) => void,
): Promise<void> {
  await tx.execute(drizzleSql`INSERT INTO orm_exports (id) VALUES (${id})`);
  tracked((await tracker.track(event(quantity), { transaction: tx })).event_key);
  if (fail) tx.rollback();
}

describe('track(event, { transaction }) through an ORM’s transaction', () => {
  it('Kysely (PostgresDialect on a pg Pool): pass the trx of db.transaction().execute', async () => {
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const tracker = await usageTracker(pool);
    await commitAndRollBack((id, quantity, fail, tracked) =>
      db.transaction().execute(async (trx) => {
        await trx.insertInto('orm_exports').values({ id }).execute();
        tracked((await tracker.track(event(quantity), { transaction: trx })).event_key);
        if (fail) throw new Error('the export failed');
      }),
    );
  });

  it('Drizzle on node-postgres: pass the tx of db.transaction', async () => {
    const db = drizzlePg(pool);
    const tracker = await usageTracker(pool);
    await commitAndRollBack((id, quantity, fail, tracked) =>
      db.transaction((tx) => drizzleExport(tx, tracker, id, quantity, fail, tracked)),
    );
  });

  it('Drizzle on postgres.js: pass the tx of db.transaction', async () => {
    const db = drizzlePostgresJs(sql);
    const tracker = await usageTracker(sql);
    await commitAndRollBack((id, quantity, fail, tracked) =>
      db.transaction((tx) => drizzleExport(tx, tracker, id, quantity, fail, tracked)),
    );
  });

  it('a Kysely instance that is not in a transaction is refused', async () => {
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const tracker = await usageTracker(pool);
    await expect(tracker.track(event(1), { transaction: db })).rejects.toThrow(/transaction must be/);
  });
});
