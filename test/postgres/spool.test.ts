import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError, SpoolError } from '../../src/core/errors/index.js';
import { postgresSpool, postgresSpoolDdl } from '../../src/postgres/index.js';
import type { Spool, SpoolEntry } from '../../src/tracker/spool.js';
import { caught } from '../helpers.js';
import { spoolContract, spooledEvent } from '../tracker/spool-contract.js';
import { startPostgres, usePostgres } from './cluster.js';

const cluster = usePostgres();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
let pool: pg.Pool;
let client: pg.Client;
let sql: postgres.Sql;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url, max: 20 });
  // pool.end() resolves before its connections are closed: one still open when the cluster stops
  // after the file is told 57P01, an 'error' event of the pool, which unheard is an uncaught exception.
  pool.on('error', () => {});
  client = new pg.Client({ connectionString: cluster.cluster.url });
  client.on('error', () => {});
  await client.connect();
  sql = postgres(cluster.cluster.url, { onnotice: () => {}, max: 10 });
});
afterAll(async () => {
  for (const spool of made) await spool.close().catch(() => {});
  await Promise.all([pool?.end(), client?.end(), sql?.end()]);
});

/** A table name per place: the contract's places hold `-`, which is no identifier. */
const tableOf = (place: string) => place.replaceAll('-', '_');
let tables = 0;
const freshTable = (what: string) => `t_${what}_${++tables}_${Date.now() % 100_000}`;

spoolContract('postgresSpool (pg Pool)', (place) => postgresSpool(pool, { table: tableOf(place) }));
spoolContract('postgresSpool (pg Client)', (place) => postgresSpool(client, { table: tableOf(place) }));
// A stable consumer name per place: the reopen takes back its own rows at once, as after a restart.
spoolContract('postgresSpool (postgres.js)', (place) =>
  postgresSpool(sql, { table: tableOf(place), schema: 'billing', consumer: place }),
);

/** Spools made by a test, closed after the file (a failing test leaves no timer running). */
const made: Spool[] = [];
async function opened(db: unknown, options: Parameters<typeof postgresSpool>[1]): Promise<Spool> {
  const spool = postgresSpool(db, options);
  made.push(spool);
  await spool.open();
  return spool;
}

/** Rows of `table` as they are: who holds each, and whether it was acknowledged. */
async function rows(table: string) {
  const result = await pool.query(
    `SELECT id::text AS id, claimed_by, lease_until > now() AS leased, acked_at IS NOT NULL AS acked
     FROM "${table}" ORDER BY id`,
  );
  return result.rows as { id: string; claimed_by: string | null; leased: boolean | null; acked: boolean }[];
}

describe('postgresSpool options', () => {
  it.each([
    [{ claimTtlMs: 0 }, 'options.claimTtlMs'],
    [{ claimTtlMs: 1.5 }, 'options.claimTtlMs'],
    [{ pollMs: -1 }, 'options.pollMs'],
    [{ retentionMs: Number.NaN }, 'options.retentionMs'],
    [{ table: 'bad-name' }, 'options.table'],
    [{ table: 'x'.repeat(49) }, 'options.table'],
    [{ schema: '1abc' }, 'options.schema'],
    [{ channel: 'a b' }, 'options.channel'],
    [{ consumer: '' }, 'options.consumer'],
    [{ claimTTLMs: 10 }, 'options.claimTTLMs'],
    // Every option of the wrong type.
    [{ schema: 42 }, 'options.schema'],
    [{ table: 5 }, 'options.table'],
    [{ channel: ['c'] }, 'options.channel'],
    [{ consumer: 7 }, 'options.consumer'],
    [{ claimTtlMs: '1000' }, 'options.claimTtlMs'],
    [{ pollMs: true }, 'options.pollMs'],
    [{ retentionMs: '60000' }, 'options.retentionMs'],
  ])('%o is refused, naming the option', (options, field) => {
    const error = (() => {
      try {
        postgresSpool(pool, options as Parameters<typeof postgresSpool>[1]);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual([field]);
    expect((error as Error).message).toMatch(/^postgresSpool: /);
  });

  it('options that are no object are refused, naming options', () => {
    expect(() => postgresSpool(pool, 'x' as never)).toThrow(/^postgresSpool: options must be a plain object/);
  });

  it.each([
    ['undefined', undefined],
    ['a redis client', { sendCommand: async () => 'OK' }],
    ['a connection string', 'postgres://localhost/x'],
    ['a postgres.js tx-like function', Object.assign(() => {}, { unsafe: () => {} })],
  ])('a db that is %s is refused, naming db', (_what, db) => {
    const error = (() => {
      try {
        postgresSpool(db);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['db']);
  });

  it('postgresSpoolDdl: the statements open() runs, quoted, for a migration tool; bad names refused', async () => {
    const ddl = postgresSpoolDdl({ schema: 'Billing_DDL', table: 'outbox' });
    expect(ddl).toContain('CREATE SCHEMA IF NOT EXISTS "Billing_DDL"');
    expect(ddl).toContain('CREATE TABLE IF NOT EXISTS "Billing_DDL"."outbox"');
    expect(postgresSpoolDdl()).toContain('"public"."billing_sdk_usage_outbox"');
    expect(postgresSpoolDdl()).not.toContain('CREATE SCHEMA');
    await pool.query(ddl);
    await pool.query(ddl); // idempotent
    // A spool on the migrated table works without creating anything.
    const spool = await opened(pool, { schema: 'Billing_DDL', table: 'outbox' });
    const [id] = await spool.append([spooledEvent(0)]);
    expect((await spool.take(1)).map((e) => e.id)).toEqual([id]);
    expect(() => postgresSpoolDdl({ table: 'x"; DROP TABLE y; --' })).toThrow(InvalidRequestError);
    expect(() => postgresSpoolDdl({ tabel: 'x' } as never)).toThrow(/options\.tabel/);
    expect(() => postgresSpoolDdl({ schema: 1 } as never)).toThrow(/options\.schema/);
  });

  it('replace with a member that is no id of the spool: InvalidRequestError, nothing written', async () => {
    const table = freshTable('badmember');
    const spool = await opened(pool, { table });
    const [id] = await spool.append([spooledEvent(0)]);
    const error = await caught(() => spool.replace([id as string, 'm1'], spooledEvent(1)));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((await rows(table)).map((r) => r.id)).toEqual([id]);
  });
});

describe('postgresSpool shared by several instances', () => {
  it('several spools opening at once on a new table all succeed (the DDL takes turns)', async () => {
    const table = freshTable('race');
    const spools = Array.from({ length: 6 }, () => postgresSpool(pool, { table }));
    made.push(...spools);
    await Promise.all(spools.map((s) => s.open()));
    expect(await rows(table)).toEqual([]);
  });

  it('relays claiming at once each get other rows (SKIP LOCKED): every row handed exactly once', async () => {
    const table = freshTable('skip');
    const spools = await Promise.all(Array.from({ length: 4 }, () => opened(pool, { table })));
    const ids = await spools[0]!.append(Array.from({ length: 200 }, (_, i) => spooledEvent(i)));
    const handed: SpoolEntry[] = [];
    await Promise.all(
      spools.map(async (spool) => {
        for (;;) {
          const batch = await spool.take(7);
          if (!batch.length) return;
          handed.push(...batch);
        }
      }),
    );
    expect(handed.map((e) => e.id).sort()).toEqual([...ids].sort());
    expect(new Set((await rows(table)).map((r) => r.claimed_by)).size).toBeGreaterThan(1);
  });

  it('a dead relay’s rows are claimed by another once the lease expired, with their ids and keys', async () => {
    const table = freshTable('lease');
    const claimTtlMs = 400;
    const ownPool = new pg.Pool({ connectionString: cluster.cluster.url });
    ownPool.on('error', () => {});
    const dead = await opened(ownPool, { table, claimTtlMs });
    const events = Array.from({ length: 5 }, (_, i) => spooledEvent(i));
    const ids = await dead.append(events);
    expect((await dead.take(10)).map((e) => e.id)).toEqual(ids);
    const handedAt = Date.now();
    // Dying: its connections are cut, so it neither renews nor gives its rows back.
    await ownPool.end();
    const survivor = await opened(pool, { table, claimTtlMs });
    expect(await survivor.take(10)).toEqual([]); // the lease holds
    let claimed: SpoolEntry[] = [];
    while (!claimed.length && Date.now() - handedAt < 5_000) {
      await sleep(25);
      claimed = await survivor.take(10);
    }
    expect(Date.now() - handedAt).toBeGreaterThanOrEqual(claimTtlMs - 50);
    expect(claimed.map((e) => e.id)).toEqual(ids);
    expect(claimed.map((e) => e.event)).toEqual(events);
    expect(await survivor.take(10)).toEqual([]);
    await survivor.ack(ids);
    expect(await rows(table)).toEqual([]);
  });

  it('a live relay keeps its rows past claimTtlMs (renewed); another takes them once it closed (given back)', async () => {
    const table = freshTable('renew');
    const claimTtlMs = 300;
    const live = await opened(pool, { table, claimTtlMs });
    const other = await opened(pool, { table, claimTtlMs });
    const ids = await live.append([spooledEvent(0), spooledEvent(1)]);
    expect((await live.take(10)).map((e) => e.id)).toEqual(ids);
    for (let i = 0; i < 6; i++) {
      await sleep(claimTtlMs / 2);
      expect(await other.take(10)).toEqual([]);
    }
    await live.close();
    expect((await other.take(10)).map((e) => e.id)).toEqual(ids); // at once, not after the lease
  });

  it('a stable consumer takes back its own rows at once after a restart', async () => {
    const table = freshTable('stable');
    const ownPool = new pg.Pool({ connectionString: cluster.cluster.url });
    ownPool.on('error', () => {});
    const first = await opened(ownPool, { table, consumer: 'pod-1', claimTtlMs: 60_000 });
    const ids = await first.append([spooledEvent(0), spooledEvent(1)]);
    await first.take(10);
    await ownPool.end(); // died holding them
    const other = await opened(pool, { table, claimTtlMs: 60_000 });
    expect(await other.take(10)).toEqual([]);
    const again = await opened(pool, { table, consumer: 'pod-1', claimTtlMs: 60_000 });
    expect((await again.take(10)).map((e) => e.id)).toEqual(ids);
  });

  it('replace conflicts when a member is held by another live relay or was acknowledged: nothing written', async () => {
    const table = freshTable('conflict');
    const a = await opened(pool, { table });
    const b = await opened(pool, { table });
    const [x, y] = (await a.append([spooledEvent(0), spooledEvent(1)])) as [string, string];
    await b.take(1); // b holds x
    const held = await caught(() => a.replace([x, y], spooledEvent(2)));
    expect((held as SpoolError).code).toBe('conflict');
    expect(held.message).toMatch(/held by another instance/);
    await b.ack([x]);
    const gone = await caught(() => a.replace([x, y], spooledEvent(2)));
    expect((gone as SpoolError).code).toBe('conflict');
    expect(gone.message).toMatch(/acknowledged already/);
    expect((await rows(table)).map((r) => r.id)).toEqual([y]);
  });

  it('size counts the rows no relay holds', async () => {
    const table = freshTable('size');
    const a = await opened(pool, { table });
    const b = await opened(pool, { table });
    await a.append([0, 1, 2, 3].map((i) => spooledEvent(i)));
    await b.take(1);
    expect(await a.size?.()).toBe(3);
    await a.take(2);
    expect(await a.size?.()).toBe(1);
  });

  it('retentionMs keeps acknowledged rows, marked, and deletes them once older', async () => {
    const table = freshTable('retain');
    const spool = await opened(pool, { table, retentionMs: 1_000, claimTtlMs: 90 });
    const ids = await spool.append([spooledEvent(0), spooledEvent(1)]);
    await spool.take(10);
    await spool.ack([ids[0] as string]);
    expect((await rows(table)).map((r) => [r.id, r.acked])).toEqual([
      [ids[0], true],
      [ids[1], false],
    ]);
    expect(await spool.pending(ids)).toEqual([ids[1]]);
    expect(await spool.take(10)).toEqual([]); // acknowledged: never handed again
    const deadline = Date.now() + 5_000;
    while ((await rows(table)).length > 1 && Date.now() < deadline) await sleep(100);
    expect((await rows(table)).map((r) => r.id)).toEqual([ids[1]]);
  });

  it('rows that hold no event (another program’s) are dropped, not handed for ever', async () => {
    const table = freshTable('unreadable');
    const spool = await opened(pool, { table });
    await pool.query(`INSERT INTO "${table}" (event) VALUES ('{"not":"an event"}'), ('[1]')`);
    const [id] = await spool.append([spooledEvent(0)]);
    expect((await spool.take(10)).map((e) => e.id)).toEqual([id]);
    expect((await rows(table)).map((r) => r.id)).toEqual([id]);
  });

  it.each(['pg', 'postgres.js'] as const)(
    'watch wakes on another instance’s append (NOTIFY), %s',
    async (kind) => {
      const table = freshTable('watch');
      const db = kind === 'pg' ? pool : sql;
      const watching = await opened(db, { table, pollMs: 60_000 });
      const appending = await opened(pool, { table });
      let woken = 0;
      const stop = watching.watch?.(() => woken++);
      const started = Date.now();
      await appending.append([spooledEvent(0)]);
      while (!woken && Date.now() - started < 2_000) await sleep(5);
      expect(woken).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(1_000);
      stop?.();
      const before = woken;
      // Another watcher hears the next append: by then the stopped one would have heard it too.
      let heard = 0;
      const stopOther = watching.watch?.(() => heard++);
      await appending.append([spooledEvent(1)]);
      while (!heard && Date.now() - started < 5_000) await sleep(5);
      stopOther?.();
      expect(heard).toBeGreaterThan(0);
      expect(woken).toBe(before);
    },
  );
});

describe('postgresSpool LISTEN connection lost', () => {
  it.each(['pg', 'postgres.js'] as const)(
    'cut by the server (pg_terminate_backend): listens again and wakes; NOTIFY works again, %s',
    async (kind) => {
      const table = freshTable('relisten');
      const watching = await opened(kind === 'pg' ? pool : sql, { table, pollMs: 60_000 });
      const appending = await opened(pool, { table });
      let woken = 0;
      watching.watch?.(() => woken++);
      const { rows } = await pool.query(
        'SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE lower(query) = lower($1)',
        [`LISTEN "${table}"`],
      );
      // The watching spool's connection, and the appending one's (it listens too).
      expect(rows).toEqual([{ cut: true }, { cut: true }]);
      const deadline = Date.now() + 5_000;
      while (!woken && Date.now() < deadline) await sleep(20);
      expect(woken).toBeGreaterThan(0); // listening again: what was committed meanwhile may be there
      woken = 0;
      const started = Date.now();
      await appending.append([spooledEvent(0)]);
      while (!woken && Date.now() < deadline) await sleep(5);
      expect(woken).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(1_000);
    },
  );
});

describe('postgresSpool when Postgres is down', () => {
  it('every step rejects with SpoolError unavailable; after a restart the spool goes on, LISTEN again', async () => {
    const own = await startPostgres();
    const ownPool = new pg.Pool({ connectionString: own.url, connectionTimeoutMillis: 2_000 });
    ownPool.on('error', () => {}); // idle clients cut by the kill
    try {
      const spool = await opened(ownPool, { table: 'outage', pollMs: 60_000 });
      const ids = await spool.append([spooledEvent(0)]);
      await own.kill();
      // The killed postmaster's backends end once they notice it died: wait until none answers.
      const down = Date.now() + 5_000;
      while (
        Date.now() < down &&
        (await ownPool.query('SELECT 1').then(
          () => true,
          () => false,
        ))
      )
        await sleep(20);
      for (const call of [
        () => spool.append([spooledEvent(1)]),
        () => spool.take(1),
        () => spool.ack(ids),
        () => spool.pending(ids),
        () => spool.replace(ids, spooledEvent(2)),
      ]) {
        const error = await caught(call);
        expect(error).toBeInstanceOf(SpoolError);
        expect((error as SpoolError).code).toBe('unavailable');
        expect(error.cause).toBeDefined();
      }
      await own.restart();
      let woken = 0;
      spool.watch?.(() => woken++);
      // LISTEN is opened again on its own (within a second once Postgres is back), and wakes.
      const deadline = Date.now() + 10_000;
      while (!woken && Date.now() < deadline) await sleep(50);
      expect(woken).toBeGreaterThan(0);
      woken = 0;
      const other = await opened(ownPool, { table: 'outage' });
      await other.append([spooledEvent(3)]);
      while (!woken && Date.now() < deadline) await sleep(10);
      expect(woken).toBeGreaterThan(0);
      expect((await spool.take(10)).map((e) => e.event.quantity)).toEqual([1, 4]);
    } finally {
      await ownPool.end().catch(() => {});
      await own.stop();
    }
  }, 60_000);
});
