import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/core/errors/index.js';
import { type Db, driverOf, isUnavailable, transactionOf } from '../../src/postgres/driver.js';
import { usePostgres } from './cluster.js';

const ref = usePostgres();

/** Resolves with the first payload `listen` hands over, or rejects after `ms`. */
function nextNotification(ms = 5_000) {
  let resolve!: (payload: string) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    setTimeout(() => rej(new Error(`no notification within ${ms} ms`)), ms).unref();
  });
  return { promise, onNotify: (payload: string) => resolve(payload) };
}

describe('driverOf / transactionOf refuse what is no driver', () => {
  it.each([
    ['null', null],
    ['a string', 'postgres://x'],
    ['a plain object', { query() {} }],
    ['a function without unsafe', () => {}],
  ])('%s: InvalidRequestError naming the field', (_name, value) => {
    const error = (() => {
      try {
        driverOf(value, 'postgresSpool', 'db');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues[0]?.field).toBe('db');
    expect(() => transactionOf(value, 'track', 'options.transaction')).toThrow(
      /options\.transaction must be/,
    );
  });

  it('a Pool is no transaction (its queries may run on another connection)', () => {
    const pool = new pg.Pool();
    expect(() => transactionOf(pool, 'track', 'options.transaction')).toThrow(InvalidRequestError);
    void pool.end();
  });

  it('a postgres.js sql (not its tx) is no transaction', () => {
    const sql = postgres('postgres://127.0.0.1:1/x');
    expect(() => transactionOf(sql, 'track', 'options.transaction')).toThrow(InvalidRequestError);
    expect(driverOf(sql, 'x', 'db').kind).toBe('postgres.js');
    void sql.end();
  });
});

describe('isUnavailable', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }, true],
    [{ code: '57P01' }, true],
    [{ code: '08006' }, true],
    [{ code: 'CONNECTION_CLOSED' }, true],
    [new Error('Connection terminated unexpectedly'), true],
    [Object.assign(new Error('x'), { errors: [{ code: 'ECONNREFUSED' }] }), true],
    [{ code: '23505' }, false],
    [{ code: '42P01' }, false],
    [new Error('syntax error'), false],
    [undefined, false],
  ])('%o → %s', (error, expected) => {
    expect(isUnavailable(error)).toBe(expected);
  });
});

describe.each(['pg Pool', 'pg Client', 'postgres.js'] as const)('%s', (kind) => {
  let db: Db;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const url = ref.cluster.url;
    if (kind === 'pg Pool') {
      const pool = new pg.Pool({ connectionString: url });
      // An idle client told the server is shutting down is no test's failure (not uncaught).
      pool.on('error', () => {});
      db = driverOf(pool, 'test', 'db');
      close = () => pool.end();
    } else if (kind === 'pg Client') {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => {});
      await client.connect();
      db = driverOf(client, 'test', 'db');
      close = () => client.end();
    } else {
      const sql = postgres(url, { onnotice: () => {} });
      db = driverOf(sql, 'test', 'db');
      close = () => sql.end();
    }
    await db.query('CREATE TABLE IF NOT EXISTS driver_t (k text PRIMARY KEY)');
  });
  afterAll(() => close?.());

  it('runs parameterized statements', async () => {
    const rows = await db.query<{ n: number; s: string }>('SELECT $1::int + 1 AS n, $2::text AS s', [
      41,
      'x',
    ]);
    expect(rows).toEqual([{ n: 42, s: 'x' }]);
  });

  it('commits a transaction and rolls one back when fn throws (rethrown)', async () => {
    const key = `${kind}-commit`;
    await db.transaction((tx) => tx.query('INSERT INTO driver_t VALUES ($1)', [key]));
    const boom = new Error('boom');
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO driver_t VALUES ($1)', [`${kind}-rollback`]);
        throw boom;
      }),
    ).rejects.toBe(boom);
    const rows = await db.query<{ k: string }>('SELECT k FROM driver_t WHERE k LIKE $1 ORDER BY k', [
      `${kind}-%`,
    ]);
    expect(rows.map((r) => r.k)).toEqual([key]);
  });

  it('listens on a channel until stopped', async () => {
    const first = nextNotification();
    const stop = await db.listen('driver_chan', first.onNotify, () => {});
    await db.query("SELECT pg_notify('driver_chan', $1)", [kind]);
    expect(await first.promise).toBe(kind);
    await stop();
  });
});
