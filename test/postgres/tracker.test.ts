import { randomUUID } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresTarget } from '../../src/cli/targets/postgres.js';
import { InvalidRequestError, SpoolError } from '../../src/core/errors/index.js';
import { BillingClient, createUsageTracker, memorySpool, type UsageTracker } from '../../src/index.js';
import { postgresSpool } from '../../src/postgres/index.js';
import { serviceNamespace } from '../../src/util/service-namespace.js';
import { caught, useMockServer } from '../helpers.js';
import { startPostgres, usePostgres } from './cluster.js';
import { holdsFor, until } from './poll.js';

const cluster = usePostgres();
const mock = useMockServer();
const sandbox = useMockServer({ apiKey: 'sandbox-key-51' });
const EVENTS_PATH = '/api/usage/events/';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
let pool: pg.Pool;
let sql: postgres.Sql;
const trackers: UsageTracker[] = [];

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url });
  pool.on('error', () => {}); // an idle client of a restarted cluster: see relay-processes.test.ts
  sql = postgres(cluster.cluster.url, { onnotice: () => {} });
  await pool.query('CREATE TABLE IF NOT EXISTS exports (id text PRIMARY KEY)');
});
afterAll(async () => {
  for (const tracker of trackers) await tracker.close({ timeoutMs: 0 }).catch(() => {});
  await Promise.all([pool?.end(), sql?.end()]);
});

const billing = () =>
  new BillingClient({ baseUrl: mock.server.baseUrl, apiKey: mock.server.apiKey, retryDelay: () => 20 });
const event = (quantity = 1) => ({
  account_ref_id: 'acct_active',
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  quantity,
});
let tables = 0;
const freshTable = () => `tracker_${++tables}_${randomUUID().slice(0, 8)}`;

function tracker(db: unknown, table: string, extra: Record<string, unknown> = {}, spoolOptions = {}) {
  const made = createUsageTracker(billing(), {
    spool: postgresSpool(db, { table, pollMs: 60_000, ...spoolOptions }),
    ...extra,
  });
  trackers.push(made);
  return made;
}

/** How many times the mock recorded `key`. */
const recordedTimes = (key: string) =>
  mock.server.store.usageEvents.filter((e) => e.event_key === key).length;

/** Runs `fn` with a client of the pool, released after. */
async function withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

/** Tracks `event(quantity)` through a transaction of its own, committed; resolves with the event's key. */
const trackCommitted = (usage: UsageTracker, quantity: number) =>
  withClient(async (client) => {
    await client.query('BEGIN');
    const { event_key } = await usage.track(event(quantity), { transaction: client });
    await client.query('COMMIT');
    return event_key;
  });

const rowCount = async (table: string) =>
  Number((await pool.query(`SELECT count(*)::int AS n FROM "${table}"`)).rows[0].n);

/** The committed event recorded exactly once and the table drained; the rolled-back one never sent (one POST in all). */
async function expectOnlyCommittedSent(table: string, committed: string, rolledBack: string): Promise<void> {
  await until('the committed event recorded', () => recordedTimes(committed) === 1);
  await until('the table drained', async () => (await rowCount(table)) === 0);
  await holdsFor(
    'one POST: the committed event only',
    () =>
      recordedTimes(committed) === 1 &&
      recordedTimes(rolledBack) === 0 &&
      mock.server.requests.count({ method: 'POST', path: EVENTS_PATH }) === 1,
    200,
  );
}

describe('track(event, { transaction }) with node-postgres', () => {
  it('a committed transaction’s event is recorded exactly once; a rolled-back one is never sent', async () => {
    const table = freshTable();
    const usage = tracker(pool, table);
    await usage.flush(); // the table exists from here
    const client = await pool.connect();
    let committed: string;
    let rolledBack: string;
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO exports (id) VALUES ($1)', [randomUUID()]);
      ({ event_key: committed } = await usage.track(event(3), { transaction: client }));
      await client.query('COMMIT');

      await client.query('BEGIN');
      ({ event_key: rolledBack } = await usage.track(event(5), { transaction: client }));
      const outside = await pool.query(
        `SELECT count(*)::int AS n FROM "${table}" WHERE event->>'event_key' = $1`,
        [rolledBack],
      );
      expect(outside.rows[0].n).toBe(0); // not visible outside the transaction
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await expectOnlyCommittedSent(table, committed, rolledBack);
    expect(usage.stats()).toMatchObject({ recorded: 1, queued: 0, inFlight: 0 });
  });

  it('the event is sent only after the commit, not while the transaction is open', async () => {
    const table = freshTable();
    const usage = tracker(pool, table);
    await usage.flush();
    await withClient(async (client) => {
      await client.query('BEGIN');
      const { event_key } = await usage.track(event(), { transaction: client });
      await holdsFor('not sent before the commit', () => recordedTimes(event_key) === 0, 1_500); // past the idle poll
      await client.query('COMMIT');
      await until('recorded after commit', () => recordedTimes(event_key) === 1);
    });
  });

  it('flush (and close) right after a commit waits for that event: recorded, nothing left in the table', async () => {
    const table = freshTable();
    const usage = tracker(pool, table);
    await usage.flush();
    let key = await trackCommitted(usage, 4);
    await usage.flush();
    expect(recordedTimes(key)).toBe(1);
    key = await trackCommitted(usage, 6);
    expect(await usage.close()).toEqual({ unsent: 0 });
    expect(recordedTimes(key)).toBe(1);
    expect(await rowCount(table)).toBe(0);
  });

  it('commit → send through NOTIFY: each well under a second though the poll is a minute away', async () => {
    const table = freshTable();
    const usage = tracker(pool, table);
    await usage.flush();
    const latencies: number[] = [];
    for (let i = 0; i < 8; i++) {
      await sleep(Math.random() * 300); // at random points of the tracker's 1 s idle poll
      const event_key = await trackCommitted(usage, 1);
      const committedAt = performance.now();
      await until('recorded', () => recordedTimes(event_key) === 1, 5_000);
      latencies.push(performance.now() - committedAt);
    }
    // An idle poll alone would make about one in three wait over 300 ms; all 8 under it is NOTIFY.
    expect(Math.max(...latencies)).toBeLessThan(300);
  });

  it('a Pool or anything that is no transaction: InvalidRequestError naming options.transaction, nothing queued', async () => {
    const table = freshTable();
    const usage = tracker(pool, table);
    await usage.flush(); // the table exists from here
    for (const bad of [pool, { query: () => {} }, 'BEGIN']) {
      const error = await caught(() => usage.track(event(), { transaction: bad }));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['options.transaction']);
    }
    expect(await rowCount(table)).toBe(0);
  });

  it('a bad event is refused as track refuses it, before anything is written', async () => {
    const table = freshTable();
    const usage = tracker(pool, table);
    await usage.flush();
    await withClient(async (client) => {
      await client.query('BEGIN');
      const error = await caught(() => usage.track({ ...event(), quantity: -1 }, { transaction: client }));
      expect(error).toBeInstanceOf(InvalidRequestError);
      await client.query('COMMIT');
    });
    expect(await rowCount(table)).toBe(0);
  });
});

describe('track(event, { transaction }) with postgres.js', () => {
  it('sql.begin committed: recorded exactly once; thrown (rolled back): never sent', async () => {
    const table = freshTable();
    const usage = tracker(sql, table);
    await usage.flush();
    const committed = await sql.begin(async (tx) => {
      await tx`INSERT INTO exports (id) VALUES (${randomUUID()})`;
      return (await usage.track(event(2), { transaction: tx })).event_key;
    });
    let rolledBack = '';
    const boom = new Error('the export failed');
    await expect(
      sql.begin(async (tx) => {
        rolledBack = (await usage.track(event(7), { transaction: tx })).event_key;
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(rolledBack).not.toBe('');
    await expectOnlyCommittedSent(table, committed, rolledBack);
  });

  it('a postgres.js sql that is not a tx of sql.begin is refused, naming options.transaction', async () => {
    const usage = tracker(sql, freshTable());
    const error = await caught(() => usage.track(event(), { transaction: sql }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['options.transaction']);
  });
});

/**
 * Ten transactions at once, each tracking through its own connection of a pool of ten, on a fresh
 * schema: `track` must need nothing but the transaction (no spool open, no other connection).
 */
async function trackInSaturatedPool(
  usage: UsageTracker,
  transact: (work: (transaction: unknown) => Promise<string>) => Promise<string>,
): Promise<string[]> {
  const keys = Promise.all(
    Array.from({ length: 10 }, (_, n) =>
      transact(async (transaction) => (await usage.track(event(n + 1), { transaction })).event_key),
    ),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the ten transactions did not settle within 20 s')), 20_000);
  });
  try {
    return await Promise.race([keys, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

describe('track(event, { transaction }) on a fresh database, every connection held by the application', () => {
  const freshSchema = () => `fresh_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

  it('node-postgres Pool of 10, 10 transactions at once: all commit, each event recorded once', async () => {
    const saturated = new pg.Pool({ connectionString: cluster.cluster.url, max: 10 });
    saturated.on('error', () => {});
    const schema = freshSchema();
    const usage = tracker(saturated, 'outbox', {}, { schema });
    const held = new Set<pg.PoolClient>();
    try {
      const keys = await trackInSaturatedPool(usage, async (work) => {
        const client = await saturated.connect();
        held.add(client);
        try {
          await client.query('BEGIN');
          const key = await work(client);
          await client.query('COMMIT');
          return key;
        } finally {
          if (held.delete(client)) client.release();
        }
      });
      await usage.flush();
      expect(keys.map(recordedTimes)).toEqual(Array(10).fill(1));
    } finally {
      // Stuck transactions lose their connections, so the spool's open and the pool's end can finish.
      for (const client of held) client.release(true);
      held.clear();
      await usage.close({ timeoutMs: 0 });
      await saturated.end();
    }
  }, 60_000);

  it('node-postgres: a transaction that made the table and rolled back leaves nothing; the next one makes it again', async () => {
    const schema = freshSchema();
    const usage = tracker(pool, 'outbox', {}, { schema });
    const rolledBack = await withClient(async (client) => {
      await client.query('BEGIN');
      const { event_key } = await usage.track(event(), { transaction: client });
      await client.query('ROLLBACK');
      return event_key;
    });
    const committed = await trackCommitted(usage, 2);
    await usage.flush();
    expect(recordedTimes(committed)).toBe(1);
    expect(recordedTimes(rolledBack)).toBe(0);
  });

  it('postgres.js of 10, 10 sql.begin at once: all commit, each event recorded once', async () => {
    const saturated = postgres(cluster.cluster.url, { onnotice: () => {}, max: 10 });
    const schema = freshSchema();
    const usage = tracker(saturated, 'outbox', {}, { schema });
    try {
      const keys = await trackInSaturatedPool(
        usage,
        (work) => saturated.begin((tx) => work(tx)) as Promise<string>,
      );
      await usage.flush();
      expect(keys.map(recordedTimes)).toEqual(Array(10).fill(1));
    } finally {
      await usage.close({ timeoutMs: 0 });
      await saturated.end({ timeout: 1 });
    }
  }, 60_000);
});

describe('track(event, { transaction }) with a spool that cannot take part in one', () => {
  it('memorySpool: InvalidRequestError naming options.transaction, nothing queued or sent', async () => {
    const usage = createUsageTracker(billing(), { spool: memorySpool() });
    trackers.push(usage);
    await withClient(async (client) => {
      const error = await caught(() => usage.track(event(), { transaction: client }));
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['options.transaction']);
      expect(error.message).toMatch(/nothing was queued/);
    });
    await usage.flush();
    expect(usage.stats()).toMatchObject({ queued: 0, inFlight: 0, recorded: 0 });
    expect(mock.server.requests.count({ method: 'POST', path: EVENTS_PATH })).toBe(0);
  });

  it('options that are no object are refused, naming options', async () => {
    const usage = tracker(pool, freshTable());
    const error = await caught(() => usage.track(event(), 42 as never));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['options']);
  });
});

describe('Postgres restarted mid-run', () => {
  it('the tracker reports SpoolError unavailable, waits, goes on: every committed event recorded once', async () => {
    const own = await startPostgres();
    const ownPool = new pg.Pool({ connectionString: own.url, connectionTimeoutMillis: 1_000 });
    ownPool.on('error', () => {});
    const errors: unknown[] = [];
    // Sends lag behind commits, so rows wait in the table when Postgres dies.
    mock.server.faults.add({
      method: 'POST',
      path: EVENTS_PATH,
      delayMs: 30,
      times: Number.POSITIVE_INFINITY,
    });
    const usage = tracker(
      ownPool,
      'outbox',
      { onError: (error: unknown) => errors.push(error), concurrency: 2 },
      { pollMs: 200, claimTtlMs: 2_000 },
    );
    const committed: string[] = [];
    const trackIn = async (n: number) => {
      const client = await ownPool.connect();
      try {
        await client.query('BEGIN');
        const { event_key } = await usage.track(event(1 + (n % 3)), { transaction: client });
        await client.query('COMMIT');
        committed.push(event_key);
      } finally {
        client.release(true);
      }
    };
    try {
      await usage.flush();
      for (let n = 0; n < 40; n++) await trackIn(n);
      expect(committed.filter((key) => recordedTimes(key) === 0).length).toBeGreaterThan(0);
      // A transaction begun before Postgres died: track through it rejects typed, as unavailable.
      const doomed = await ownPool.connect();
      doomed.on('error', () => {}); // its connection ends while it is checked out
      await doomed.query('BEGIN');
      await own.kill();
      const lost = await caught(() => usage.track(event(), { transaction: doomed }));
      doomed.release(true);
      expect(lost).toBeInstanceOf(SpoolError);
      expect((lost as SpoolError).code).toBe('unavailable');
      await until(
        'an unavailable spool reported',
        () => errors.some((e) => e instanceof SpoolError && e.code === 'unavailable'),
        10_000,
      );
      await sleep(500);
      await own.restart();
      for (let n = 40; n < 60; n++) await trackIn(n);
      await until(
        'every committed event recorded',
        () => committed.every((key) => recordedTimes(key) >= 1),
        30_000,
      );
      await usage.flush();
      expect(committed.filter((key) => recordedTimes(key) !== 1)).toEqual([]);
      expect(committed).toHaveLength(60);
      // Only typed errors reached onError.
      for (const error of errors) expect(error).toBeInstanceOf(SpoolError);
      await until('the table drained', async () => {
        const rows = await ownPool.query('SELECT count(*)::int AS n FROM outbox');
        return rows.rows[0].n === 0;
      });
    } finally {
      await usage.close({ timeoutMs: 0 });
      await ownPool.end().catch(() => {});
      await own.stop();
    }
  }, 90_000);
});

// Issue 51 §2: two services (a live and a sandbox gateway) with postgresSpool defaults on one
// database, one through each driver. Each tracker writes to its service's table, so each relay
// sends only its own events, with its own key; a rotated key's table is named by doctor and sent
// from under the current key by naming it.
describe('postgresSpool defaults, two services on one database', () => {
  const defaults = { pollMs: 60_000 };
  const tableOf = (apiKey: string, baseUrl: string) =>
    `billing_sdk_usage_outbox_${serviceNamespace(apiKey, baseUrl).slice(0, 16)}`;
  const rowsOf = async (table: string) =>
    (await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE acked_at IS NULL`)).rows[0].n;
  /** Units the mock at `server` recorded of the events `keys` (its ledger holds demo usage too). */
  const unitsOf = (server: typeof mock.server, keys: readonly string[]) =>
    keys.reduce((sum, key) => sum + (server.store.usageEvent(key)?.quantity ?? 0), 0);

  async function write(client: BillingClient, db: unknown, n: number, quantity: number): Promise<string[]> {
    const writer = createUsageTracker(client, { spool: postgresSpool(db, defaults), relay: false });
    const keys: string[] = [];
    for (let i = 0; i < n; i++) keys.push((await writer.track(event(quantity))).event_key);
    await writer.close();
    return keys;
  }
  async function relay(client: BillingClient, db: unknown, table?: string): Promise<void> {
    const spool = postgresSpool(db, table === undefined ? defaults : { ...defaults, table });
    const relaying = createUsageTracker(client, { spool });
    await relaying.flush();
    expect((await relaying.close()).unsent).toBe(0);
  }

  it('each table holds its service’s events; each relay sends only its own; doctor names a rotated key’s table', async () => {
    const live = billing();
    const other = new BillingClient({ baseUrl: sandbox.server.baseUrl, apiKey: sandbox.server.apiKey });
    const liveTable = tableOf(mock.server.apiKey, mock.server.baseUrl);
    const liveKeys = await write(live, pool, 10, 1);
    const sandboxKeys = await write(other, sql, 6, 1000);
    const all = [...liveKeys, ...sandboxKeys];
    expect(await rowsOf(liveTable)).toBe(10);
    expect(await rowsOf(tableOf(sandbox.server.apiKey, sandbox.server.baseUrl))).toBe(6);
    expect((await pool.query(`SELECT to_regclass('billing_sdk_usage_outbox') AS t`)).rows[0].t).toBeNull();

    // The live relay runs alone first: with one shared table it sent the sandbox's events too.
    await relay(live, sql);
    expect(unitsOf(mock.server, all)).toBe(10);
    expect(unitsOf(sandbox.server, all)).toBe(0);
    await relay(other, pool);
    expect(unitsOf(sandbox.server, all)).toBe(6000);
    expect(unitsOf(mock.server, all)).toBe(10);

    // The live key rotated: what the old one's writers left waits in the old namespace's table.
    const rotated = new BillingClient({ baseUrl: mock.server.baseUrl, apiKey: 'sk_old_key_51' });
    const oldKeys = await write(rotated, pool, 3, 7);
    const oldTable = tableOf('sk_old_key_51', mock.server.baseUrl);
    const flags = {
      kind: 'postgres',
      url: cluster.cluster.url,
      table: undefined,
      schema: undefined,
      consumer: undefined,
    } as const;
    const target = await postgresTarget(flags, {
      connections: 2,
      service: serviceNamespace(mock.server.apiKey, mock.server.baseUrl),
    });
    try {
      expect(target.label).toContain(liveTable);
      expect(await target.others?.()).toContainEqual({
        name: oldTable,
        waiting: 3,
        oldestMs: expect.any(Number),
      });
    } finally {
      await target.close();
    }
    // The relay under the current key, told the old table's name (relay --table), sends them.
    await relay(live, pool, oldTable);
    expect(unitsOf(mock.server, oldKeys)).toBe(21);
    expect(await rowsOf(oldTable)).toBe(0);
  });
});
