import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookHandler, InvalidRequestError, isBillingError, StoreError } from '../../src/index.js';
import { postgresDedupeDdl } from '../../src/postgres/dedupe-ddl.js';
import { postgresDedupeStore } from '../../src/postgres/dedupe-store.js';
import { storeFailure } from '../../src/postgres/store-failure.js';
import { caught } from '../helpers.js';
import { dedupeContract } from '../redis/dedupe-contract.js';
import { event } from '../webhooks/event.js';
import { startPostgres, usePostgres } from './cluster.js';
import { connect, DRIVERS, type DriverKind, uniqueTable } from './connect.js';

const ref = usePostgres();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
  dedupeContract(`postgresDedupeStore (${kind})`, async () => ({
    store: postgresDedupeStore((await handle(kind)).db, { table: uniqueTable('contract') }),
    advance: sleep,
  }));
}

describe('postgresDedupeStore in Postgres', () => {
  it('makes its table on first use, in the schema asked for, one row per id; the DDL says the same', async () => {
    const table = uniqueTable('made');
    const store = postgresDedupeStore(admin, { schema: 'billing_inbox', table });
    expect(await store.claim('tx-1', 'token-1', 30_000)).toBe('claimed');
    const rows = await admin.query(
      `SELECT id, token, expires_at > now() + interval '25 seconds' AS live, done_at FROM billing_inbox.${table}`,
    );
    expect(rows.rows).toEqual([{ id: 'tx-1', token: 'token-1', live: true, done_at: null }]);
    expect(await store.complete('tx-1', 'token-1')).toBe(true);
    const done = await admin.query(`SELECT done_at IS NOT NULL AS done FROM billing_inbox.${table}`);
    expect(done.rows).toEqual([{ done: true }]);
    const ddl = postgresDedupeDdl({ schema: 'billing_inbox', table });
    expect(ddl).toContain(`CREATE SCHEMA IF NOT EXISTS "billing_inbox"`);
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS "billing_inbox"."${table}"`);
    await admin.query(ddl); // idempotent: runs again over the table the store made
  });

  it('works on a table a migration made, for a user who may not create tables', async () => {
    const table = uniqueTable('migrated');
    await admin.query(postgresDedupeDdl({ table }));
    await admin.query('DROP ROLE IF EXISTS inbox_app');
    await admin.query('CREATE ROLE inbox_app LOGIN');
    await admin.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO inbox_app`);
    const app = new pg.Pool({ connectionString: ref.cluster.url.replace('postgres@', 'inbox_app@') });
    try {
      const store = postgresDedupeStore(app, { table });
      expect(await store.claim('tx', 't', 30_000)).toBe('claimed');
      expect(await store.complete('tx', 't')).toBe(true);
      // Without the migration, the same user gets a typed error naming the step.
      const error = await caught(() =>
        postgresDedupeStore(app, { table: uniqueTable('absent') }).claim('tx', 't', 1),
      );
      expect(isBillingError(error, 'StoreError') && error.code).toBe('unexpected_reply');
      expect(String(error)).toMatch(
        /^StoreError: postgresDedupeStore\.claim: Postgres answered an error: permission denied/,
      );
    } finally {
      await app.end();
    }
  });

  it("a table made before the answer column: webhooks never alter it; the gate's first answer adds the column", async () => {
    const table = uniqueTable('before_answers');
    await admin.query(
      `CREATE TABLE ${table} (id text PRIMARY KEY, token text, expires_at timestamptz, done_at timestamptz)`,
    );
    const columns = async () =>
      (
        await admin.query(
          `SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
          [table],
        )
      ).rows.map((r) => r.column_name);
    const store = postgresDedupeStore(admin, { table });
    await store.claim('hook', 't', 30_000);
    expect(await store.complete('hook', 't')).toBe(true);
    expect(await columns()).toEqual(['id', 'token', 'expires_at', 'done_at']);
    await store.claim('key', 't', 30_000);
    expect(await store.complete('key', 't', '{"status":200}')).toBe(true);
    expect(await columns()).toEqual(['id', 'token', 'expires_at', 'done_at', 'answer']);
    const other = postgresDedupeStore(admin, { table }); // another instance: finds the column there
    expect([await other.answer('key'), await other.answer('hook')]).toEqual(['{"status":200}', undefined]);
    await admin.query(postgresDedupeDdl({ table })); // the migration runs over it too
  });

  it('forgets done ids after doneTtlMs: pruned after a later event completes', async () => {
    const table = uniqueTable('pruned');
    const store = postgresDedupeStore(admin, { table, doneTtlMs: 100 });
    await store.claim('old', 't', 30_000);
    await store.complete('old', 't');
    await store.claim('stale-claim', 't', 20);
    await sleep(250);
    await store.claim('new', 't', 30_000);
    await store.complete('new', 't'); // prunes in the background
    const ids = async () => (await admin.query(`SELECT id FROM ${table} ORDER BY id`)).rows.map((r) => r.id);
    for (let i = 0; i < 50 && (await ids()).length > 1; i++) await sleep(20);
    expect(await ids()).toEqual(['new']);
    expect(await store.claim('old', 'u', 30_000)).toBe('claimed');
  });

  it('ids hold any text: quotes, backslashes, long ones', async () => {
    const store = postgresDedupeStore(admin, { table: uniqueTable('ids') });
    // Up to ~2 700 bytes, Postgres's limit for a key of a btree index (webhook ids are far shorter).
    const ids = ["it's", 'a\\b', '"; DROP TABLE x; --', randomBytes(1_000).toString('hex')];
    for (const id of ids) expect(await store.claim(id, 't', 30_000)).toBe('claimed');
    for (const id of ids) expect(await store.complete(id, 't')).toBe(true);
    for (const id of ids) expect(await store.claim(id, 'u', 30_000)).toBe('done');
  });
});

describe('postgresDedupeStore refuses bad arguments: InvalidRequestError naming them', () => {
  it.each([
    ['null', null],
    ['a connection string', 'postgres://x'],
    ['a redis client', { sendCommand() {} }],
  ])('db %s', async (_name, db) => {
    const error = await caught(() => postgresDedupeStore(db));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues[0]?.field).toBe('db');
  });

  it.each([
    [{ table: 'has space' }, 'options.table'],
    [{ table: '1abc' }, 'options.table'],
    [{ schema: 'a"b' }, 'options.schema'],
    [{ table: 'x'.repeat(49) }, 'options.table'],
    [{ doneTtlMs: 0 }, 'options.doneTtlMs'],
    [{ doneTtlMs: Number.NaN }, 'options.doneTtlMs'],
    [{ prefix: 'x' }, 'options.prefix'],
    // Every option of the wrong type.
    [{ schema: 1 }, 'options.schema'],
    [{ table: {} }, 'options.table'],
    [{ doneTtlMs: '60000' }, 'options.doneTtlMs'],
  ])('options %o → %s', async (options, field) => {
    const error = await caught(() => postgresDedupeStore(admin, options as never));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual([field]);
  });

  it('options that are no plain object', async () => {
    const error = await caught(() => postgresDedupeStore(admin, [] as never));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(String(error)).toContain('options must be a plain object');
  });

  it('postgresDedupeDdl checks its options too', async () => {
    const error = await caught(() => postgresDedupeDdl({ table: 'no-dash' }));
    expect((error as InvalidRequestError).issues[0]?.field).toBe('options.table');
  });
});

describe('postgresDedupeStore when Postgres fails: typed errors, the handler fails closed', () => {
  const post = (handler: (r: Request) => Promise<Response>, body: string) =>
    handler(new Request('http://x/', { method: 'POST', body }));

  for (const kind of DRIVERS) {
    it(`${kind}: a Postgres killed (SIGKILL) → 500, onEvent not run, onError gets StoreError unavailable`, async () => {
      const doomed = await startPostgres();
      const { db, close } = await connect(kind, doomed.url);
      try {
        const errors: unknown[] = [];
        let calls = 0;
        const handler = createWebhookHandler({
          dedupe: postgresDedupeStore(db, { table: uniqueTable('down') }),
          onEvent: () => void calls++,
          onError: (error) => void errors.push(error),
        });
        expect((await post(handler, JSON.stringify(event()))).status).toBe(200);
        await doomed.kill();
        expect((await post(handler, JSON.stringify(event()))).status).toBe(500);
        expect(calls).toBe(1);
        expect(errors[0]).toBeInstanceOf(StoreError);
        expect(isBillingError(errors[0], 'StoreError') && errors[0].code).toBe('unavailable');
        expect(String(errors[0])).toMatch(/^StoreError: postgresDedupeStore\.claim: Postgres failed: /);
      } finally {
        await close().catch(() => {});
        await doomed.stop();
      }
    });
  }

  it('a server that was never there: StoreError unavailable on first use (the table is not made)', async () => {
    const nowhere = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
    try {
      const error = await caught(() => postgresDedupeStore(nowhere).claim('tx', 't', 1_000));
      expect(isBillingError(error, 'StoreError') && error.code).toBe('unavailable');
      expect((error as StoreError).cause).toBeInstanceOf(Error);
    } finally {
      await nowhere.end();
    }
  });

  it('a table of that name with other columns: StoreError unexpected_reply, onEvent not run', async () => {
    const table = uniqueTable('foreign');
    await admin.query(`CREATE TABLE ${table} (id text PRIMARY KEY, payload jsonb)`);
    const errors: unknown[] = [];
    let calls = 0;
    const handler = createWebhookHandler({
      dedupe: postgresDedupeStore(admin, { table }),
      onEvent: () => void calls++,
      onError: (error) => void errors.push(error),
    });
    expect((await post(handler, JSON.stringify(event()))).status).toBe(500);
    expect(calls).toBe(0);
    expect(isBillingError(errors[0], 'StoreError') && errors[0].code).toBe('unexpected_reply');
    expect(String(errors[0])).toContain('column "token"');
  });
});

describe('which Postgres failures are "unavailable" (worth a retry) and which "unexpected_reply"', () => {
  it.each([
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, 'unavailable'],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, 'unavailable'],
    [{ code: '40001', message: 'could not serialize access' }, 'unavailable'],
    [{ code: '40P01', message: 'deadlock detected' }, 'unavailable'],
    [{ code: '53300', message: 'too many connections' }, 'unavailable'],
    [{ code: '55P03', message: 'lock not available' }, 'unavailable'],
    [{ code: '42P01', message: 'relation does not exist' }, 'unexpected_reply'],
    [{ code: '42501', message: 'permission denied' }, 'unexpected_reply'],
    [{ code: '22021', message: 'invalid byte sequence' }, 'unexpected_reply'],
  ])('%o → %s, the driver’s error as cause', (cause, code) => {
    const error = storeFailure('postgresDedupeStore.claim', Object.assign(new Error(cause.message), cause));
    expect(error.code).toBe(code);
    expect(error.message).toContain(`postgresDedupeStore.claim: Postgres `);
    expect(error.message).toContain(cause.message);
    expect((error.cause as { code: string }).code).toBe(cause.code);
  });

  it('a StoreError passes as it is (not wrapped twice)', () => {
    const inner = new StoreError('unavailable', 'postgresDedupeStore.claim: Postgres failed: x');
    expect(storeFailure('postgresDedupeStore.runInTransaction', inner)).toBe(inner);
  });
});
