import { type AddressInfo, createServer, type Socket } from 'node:net';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError, isBillingError, StoreError } from '../../src/index.js';
import { postgresHoldDdl, postgresHoldStore } from '../../src/postgres/index.js';
import { freshLedger, holdStoreContract } from '../credits/hold-contract.js';
import { holdNamespaceCase } from '../credits/hold-namespace.js';
import { caught } from '../helpers.js';
import { startPostgres, usePostgres } from './cluster.js';
import { connect, DRIVERS, type DriverKind, uniqueTable } from './connect.js';

const ref = usePostgres();
/** A loaded machine (a cluster started per file, on two cores) may answer slowly; only the timeout tests time Postgres. */
const SLOW = 10_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const hold = (quantity: number, ttlMs = 60_000) => ({ id: crypto.randomUUID(), quantity, ttlMs });

/** One handle per driver for the file, opened lazily (the cluster starts in beforeAll). */
const handles = new Map<DriverKind, Promise<{ db: unknown; close(): Promise<void> }>>();
const handle = (kind: DriverKind) => {
  if (!handles.has(kind)) handles.set(kind, connect(kind, ref.cluster.url));
  return handles.get(kind) as Promise<{ db: unknown; close(): Promise<void> }>;
};
let admin: pg.Pool;
beforeAll(() => {
  admin = new pg.Pool({ connectionString: ref.cluster.url });
  admin.on('error', () => {}); // its idle clients see the cluster stop at the end
});
afterAll(async () => {
  for (const h of handles.values()) await (await h).close();
  await admin?.end();
});

for (const kind of DRIVERS) {
  // One store per driver, shared by its tests (each uses ledgers of its own): the first test makes
  // the tables, the others find them.
  let store: ReturnType<typeof postgresHoldStore> | undefined;
  let other: ReturnType<typeof postgresHoldStore> | undefined;
  const table = uniqueTable('holds');
  // Another instance of the service on the same tables, through the next driver.
  const otherKind = DRIVERS[(DRIVERS.indexOf(kind) + 1) % DRIVERS.length]!;
  holdStoreContract(`postgresHoldStore (${kind})`, async () => {
    store ??= postgresHoldStore((await handle(kind)).db, { table, timeoutMs: SLOW });
    other ??= postgresHoldStore((await handle(otherKind)).db, { table, timeoutMs: SLOW });
    return { store, other, advance: sleep };
  });
}

// Default options (the default table), but for a generous timeout on a loaded machine.
holdNamespaceCase(
  'postgresHoldStore on one database, default table',
  async () => postgresHoldStore(admin, { timeoutMs: SLOW }),
  async () =>
    JSON.stringify(
      (await admin.query('SELECT account, product, meter FROM billing_sdk_credit_ledgers')).rows,
    ),
);

describe('postgresHoldStore in Postgres', () => {
  it('makes its tables on first use, in the schema asked for; the DDL says the same', async () => {
    const table = uniqueTable('made');
    const store = postgresHoldStore(admin, { schema: 'billing_holds', table, timeoutMs: SLOW });
    const ledger = freshLedger();
    const r = await store.reserve(ledger, hold(1), 60_000);
    expect(r.status).toBe('stale');
    if (r.status !== 'stale') return;
    await store.setBalance(ledger, 50, r.fence);
    const h = hold(20);
    expect(await store.reserve(ledger, h, 60_000)).toEqual({ status: 'granted', available: 30, expired: 0 });
    const ledgers = await admin.query(
      `SELECT account, product, meter, balance::int, read_at IS NOT NULL AS fresh FROM billing_holds.${table}_ledgers`,
    );
    expect(ledgers.rows).toEqual([{ ...ledger, balance: 50, fresh: true }]);
    const holds = await admin.query(
      `SELECT id, quantity::int, expires_at > now() + interval '50 seconds' AS live FROM billing_holds.${table}_holds`,
    );
    expect(holds.rows).toEqual([{ id: h.id, quantity: 20, live: true }]);
    const ddl = postgresHoldDdl({ schema: 'billing_holds', table });
    expect(ddl).toContain(`CREATE SCHEMA IF NOT EXISTS "billing_holds"`);
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS "billing_holds"."${table}_ledgers"`);
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS "billing_holds"."${table}_holds"`);
    await admin.query(ddl); // idempotent: runs again over the tables the store made
  });

  it('works on tables a migration made, for a user who may not create tables', async () => {
    const table = uniqueTable('migrated');
    await admin.query(postgresHoldDdl({ table }));
    await admin.query('DROP ROLE IF EXISTS holds_app');
    await admin.query('CREATE ROLE holds_app LOGIN');
    await admin.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    await admin.query(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ${table}_ledgers, ${table}_holds TO holds_app`,
    );
    const app = new pg.Pool({ connectionString: ref.cluster.url.replace('postgres@', 'holds_app@') });
    app.on('error', () => {});
    try {
      const store = postgresHoldStore(app, { table, timeoutMs: SLOW });
      const ledger = freshLedger();
      const r = await store.reserve(ledger, hold(1), 60_000);
      if (r.status !== 'stale') throw new Error(`expected stale, got ${JSON.stringify(r)}`);
      await store.setBalance(ledger, 5, r.fence);
      expect((await store.reserve(ledger, hold(5), 60_000)).status).toBe('granted');
      // Without the migration, the same user gets a typed error naming the step.
      const error = await caught(() =>
        postgresHoldStore(app, { table: uniqueTable('absent') }).reserve(ledger, hold(1), 60_000),
      );
      expect(isBillingError(error, 'StoreError') && error.code).toBe('unexpected_reply');
      expect(String(error)).toMatch(
        /^StoreError: postgresHoldStore\.reserve: Postgres answered an error: permission denied/,
      );
    } finally {
      await app.end();
    }
  });

  it('stores over different drivers on one table never hold more than the balance together', async () => {
    const table = uniqueTable('shared');
    const stores = await Promise.all(
      DRIVERS.map(async (kind) => postgresHoldStore((await handle(kind)).db, { table, timeoutMs: SLOW })),
    );
    const ledger = freshLedger();
    const r = await stores[0]!.reserve(ledger, hold(1), 60_000);
    if (r.status !== 'stale') throw new Error(`expected stale, got ${JSON.stringify(r)}`);
    await stores[0]!.setBalance(ledger, 100, r.fence);
    const results = await Promise.all(
      Array.from({ length: 45 }, (_, i) => stores[i % stores.length]!.reserve(ledger, hold(10), 60_000)),
    );
    expect(results.filter((x) => x.status === 'granted')).toHaveLength(10);
    expect(results.filter((x) => x.status === 'refused')).toHaveLength(35);
    const { rows } = await admin.query(`SELECT sum(quantity)::int AS held FROM ${table}_holds`);
    expect(rows[0].held).toBe(100);
  });
  it('settles, releases and reservations meeting on expired holds all answer (no deadlock)', async () => {
    const table = uniqueTable('meet');
    const store = postgresHoldStore(admin, { table, timeoutMs: SLOW });
    const ledger = freshLedger();
    const r = await store.reserve(ledger, hold(1), 60_000);
    if (r.status !== 'stale') throw new Error(`expected stale, got ${JSON.stringify(r)}`);
    await store.setBalance(ledger, 1_000, r.fence);
    const short = Array.from({ length: 20 }, () => hold(10, 300));
    for (const h of short) await store.reserve(ledger, h, 60_000);
    // Until every hold expired by the database's clock (polled, not slept).
    await expect
      .poll(
        async () =>
          (
            await admin.query(
              `SELECT count(*)::int AS n FROM ${table}_holds WHERE expires_at > clock_timestamp()`,
            )
          ).rows[0].n,
        { timeout: 10_000 },
      )
      .toBe(0);
    // A reservation drops expired holds under the ledger's lock while settles and releases drop
    // the same rows: the locks are taken in one order, so none waits on another in a circle (a
    // deadlock would reject one with a StoreError).
    const steps = await Promise.all([
      ...short.map((h, i) => (i % 2 ? store.settle(ledger, h.id, 1_000, 1) : store.release(ledger, h.id))),
      ...Array.from({ length: 20 }, () => store.reserve(ledger, hold(10), 60_000)),
      store.invalidate(ledger.account),
    ]);
    const freed = steps.slice(0, 20) as { held: boolean }[];
    expect(freed.every((f) => f.held === false)).toBe(true);
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${table}_holds`);
    expect(rows[0].n).toBe(
      steps.slice(20, 40).filter((x) => (x as { status: string }).status === 'granted').length,
    );
  });
});

describe('postgresHoldStore refuses bad arguments: InvalidRequestError naming them', () => {
  it.each([
    ['null', null],
    ['a connection string', 'postgres://x'],
    ['a redis client', { sendCommand() {} }],
  ])('db %s', async (_name, db) => {
    const error = await caught(() => postgresHoldStore(db));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues[0]?.field).toBe('db');
  });

  it.each([
    [{ table: 'has space' }, 'options.table'],
    [{ table: '1abc' }, 'options.table'],
    [{ table: 'x'.repeat(49) }, 'options.table'],
    [{ schema: 'a"b' }, 'options.schema'],
    [{ prefix: 'x' }, 'options.prefix'],
    [{ balanceTtlMs: 1_000 }, 'options.balanceTtlMs'],
    // Every option of the wrong type.
    [{ schema: 1 }, 'options.schema'],
    [{ table: {} }, 'options.table'],
    [{ timeoutMs: 0 }, 'options.timeoutMs'],
    [{ timeoutMs: 1.5 }, 'options.timeoutMs'],
    [{ timeoutMs: 2 ** 31 }, 'options.timeoutMs'],
    [{ timeoutMs: '500' }, 'options.timeoutMs'],
  ])('options %o → %s', async (options, field) => {
    const error = await caught(() => postgresHoldStore(admin, options as never));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual([field]);
  });

  it('options that are no plain object', async () => {
    const error = await caught(() => postgresHoldStore(admin, [] as never));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(String(error)).toContain('options must be a plain object');
  });

  it('postgresHoldDdl checks its options too', async () => {
    const error = await caught(() => postgresHoldDdl({ table: 'no-dash' }));
    expect((error as InvalidRequestError).issues[0]?.field).toBe('options.table');
  });
});

describe('postgresHoldStore when Postgres fails: StoreError, never a grant', () => {
  for (const kind of DRIVERS) {
    it(`${kind}: a Postgres killed (SIGKILL) → every method rejects with StoreError unavailable`, async () => {
      const doomed = await startPostgres();
      const { db, close } = await connect(kind, doomed.url);
      try {
        const store = postgresHoldStore(db, { table: uniqueTable('down') });
        const ledger = freshLedger();
        const r = await store.reserve(ledger, hold(1), 60_000);
        if (r.status !== 'stale') throw new Error(`expected stale, got ${JSON.stringify(r)}`);
        await store.setBalance(ledger, 100, r.fence);
        const h = hold(10);
        expect((await store.reserve(ledger, h, 60_000)).status).toBe('granted');
        await doomed.kill();
        const calls: [string, () => Promise<unknown>][] = [
          ['reserve', () => store.reserve(ledger, hold(1), 60_000)],
          ['setBalance', () => store.setBalance(ledger, 100, r.fence)],
          ['settle', () => store.settle(ledger, h.id, 90, 10)],
          ['release', () => store.release(ledger, h.id)],
          ['extend', () => store.extend(ledger, h.id, 1_000)],
          ['invalidate', () => store.invalidate(ledger.account)],
        ];
        for (const [step, call] of calls) {
          const error = await caught(call);
          expect(error).toBeInstanceOf(StoreError);
          expect(isBillingError(error, 'StoreError') && error.code).toBe('unavailable');
          expect(String(error)).toMatch(
            new RegExp(`^StoreError: postgresHoldStore\\.${step}: Postgres failed: `),
          );
          expect((error as StoreError).cause).toBeInstanceOf(Error);
        }
      } finally {
        await close().catch(() => {});
        await doomed.stop();
      }
    }, 60_000);
  }

  for (const kind of DRIVERS) {
    it(`${kind}: a table locked by another session → StoreError unavailable within timeoutMs, then served again`, async () => {
      const table = uniqueTable('locked');
      const { db } = await handle(kind);
      // Its tables made and a balance set by a store with time to spare (a loaded machine is slow to make tables).
      const setup = postgresHoldStore(db, { table, timeoutMs: 10_000 });
      const ledger = freshLedger();
      const r = await setup.reserve(ledger, hold(1), 60_000);
      if (r.status !== 'stale') throw new Error(`expected stale, got ${JSON.stringify(r)}`);
      await setup.setBalance(ledger, 10, r.fence);
      const store = postgresHoldStore(db, { table, timeoutMs: 300 });
      // A migration holds the ledgers table: every statement on it waits for the lock.
      const migration = await admin.connect();
      try {
        await migration.query('BEGIN');
        await migration.query(`LOCK TABLE ${table}_ledgers IN ACCESS EXCLUSIVE MODE`);
        const started = Date.now();
        const error = await caught(() => store.reserve(ledger, hold(1), 60_000));
        const waited = Date.now() - started;
        expect(isBillingError(error, 'StoreError') && error.code).toBe('unavailable');
        expect(String(error)).toMatch(
          /^StoreError: postgresHoldStore\.reserve: Postgres did not answer within 300 ms/,
        );
        expect(waited).toBeGreaterThanOrEqual(290);
        expect(waited).toBeLessThan(3_000);
      } finally {
        await migration.query('ROLLBACK');
        migration.release();
      }
      // The lock gone, the store answers again.
      await expect
        .poll(async () => (await store.reserve(ledger, hold(1), 60_000).catch(() => undefined))?.status, {
          timeout: 10_000,
        })
        .toBe('granted');
    });
  }

  it('a server that accepts and never answers → StoreError unavailable within timeoutMs (pg Pool, postgres.js)', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const pool = new pg.Pool({ connectionString: url });
    pool.on('error', () => {});
    const sql = postgres(url, { onnotice: () => {} });
    try {
      for (const db of [pool, sql]) {
        const store = postgresHoldStore(db, { table: uniqueTable('silent'), timeoutMs: 200 });
        const started = Date.now();
        const error = await caught(() => store.reserve(freshLedger(), hold(1), 60_000));
        expect(isBillingError(error, 'StoreError') && error.code).toBe('unavailable');
        expect(String(error)).toMatch(/did not answer within 200 ms/);
        expect(Date.now() - started).toBeLessThan(3_000);
      }
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      void pool.end().catch(() => {});
      void sql.end({ timeout: 0 }).catch(() => {});
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('an ended pool: StoreError, the driver’s error as cause', async () => {
    const pool = new pg.Pool({ connectionString: ref.cluster.url });
    pool.on('error', () => {});
    const store = postgresHoldStore(pool, { table: uniqueTable('ended') });
    await pool.end();
    const error = await caught(() => store.reserve(freshLedger(), hold(1), 60_000));
    expect(error).toBeInstanceOf(StoreError);
    expect(String(error)).toMatch(/^StoreError: postgresHoldStore\.reserve: Postgres /);
    expect((error as StoreError).cause).toBeInstanceOf(Error);
  });

  it('a table of that name with other columns: StoreError unexpected_reply', async () => {
    const table = uniqueTable('foreign');
    await admin.query(`CREATE TABLE ${table}_ledgers (account text PRIMARY KEY)`);
    await admin.query(`CREATE TABLE ${table}_holds (id text PRIMARY KEY)`);
    const error = await caught(() =>
      postgresHoldStore(admin, { table }).reserve(freshLedger(), hold(1), 60_000),
    );
    expect(isBillingError(error, 'StoreError') && error.code).toBe('unexpected_reply');
    expect(String(error)).toMatch(/^StoreError: postgresHoldStore\.reserve: Postgres answered an error: /);
  });
});
