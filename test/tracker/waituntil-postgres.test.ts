import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsageTracker, type UsageTracker, type UsageTrackerOptions } from '../../src/index.js';
import { postgresSpool } from '../../src/postgres/index.js';
import { clientFor, useMockServer } from '../helpers.js';
import { usePostgres } from '../postgres/cluster.js';
import { METER } from './support.js';
import { platform } from './waituntil-platform.js';

// The serverless shapes over a real PostgreSQL: a function that tracks through the outbox and is
// dropped once its waitUntil promises settle, and a function that only writes (relay: false,
// plain or inside its own transaction) while a relay of its own sends.
const cluster = usePostgres();
const mock = useMockServer();
let pool: pg.Pool;
const trackers: UsageTracker[] = [];
beforeAll(() => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url });
  pool.on('error', () => {});
});
afterAll(async () => {
  for (const tracker of trackers) await tracker.close({ timeoutMs: 0 }).catch(() => {});
  await pool?.end();
});

const freshTable = () => `waituntil_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const recordedTimes = (key: string) =>
  mock.server.store.usageEvents.filter((e) => e.event_key === key).length;
const rows = async (table: string) =>
  Number((await pool.query(`SELECT count(*)::int AS n FROM "${table}"`)).rows[0].n);
function tracker(table: string, extra: UsageTrackerOptions = {}): UsageTracker {
  const made = createUsageTracker(clientFor(mock.server), {
    spool: postgresSpool(pool, { table, pollMs: 60_000 }),
    ...extra,
  });
  trackers.push(made);
  return made;
}

describe('postgresSpool and waitUntil', () => {
  it('per call: once the promises handed settle, every event is recorded once and the outbox is empty', async () => {
    const table = freshTable();
    const usage = tracker(table);
    const contexts = Array.from({ length: 10 }, () => platform());
    const keys = await Promise.all(
      contexts.map(
        async (ctx, i) =>
          (await usage.track({ ...METER, quantity: i + 1 }, { waitUntil: ctx.waitUntil })).event_key,
      ),
    );
    await Promise.all(contexts.map((ctx) => ctx.settled()));
    expect(keys.map(recordedTimes)).toEqual(keys.map(() => 1));
    expect(contexts.map((ctx) => ctx.rejected)).toEqual(contexts.map(() => 0));
    expect(await rows(table)).toBe(0);
  });
});

describe('relay: false with postgresSpool', () => {
  it('writes plain and through a transaction, sends nothing; a relay then sends each event once', async () => {
    const table = freshTable();
    const ctx = platform();
    const writer = tracker(table, { relay: false, waitUntil: ctx.waitUntil });
    const keys: string[] = [];
    for (let i = 1; i <= 3; i++) keys.push((await writer.track({ ...METER, quantity: i })).event_key);
    await writer.flush(); // the table exists from here
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      keys.push((await writer.track({ ...METER, quantity: 7 }, { transaction: client })).event_key);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await ctx.settled();
    expect([ctx.handed, ctx.rejected]).toEqual([4, 0]);
    expect(await writer.close()).toEqual({ unsent: 0 });
    // The writer is closed and no relay ran yet: nothing was sent, everything waits in the outbox.
    expect(keys.map(recordedTimes)).toEqual([0, 0, 0, 0]);
    expect(await rows(table)).toBe(4);
    const relay = tracker(table);
    await relay.flush();
    expect(keys.map(recordedTimes)).toEqual([1, 1, 1, 1]);
    expect(await rows(table)).toBe(0);
  });
});
