import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsageTracker } from '../../src/index.js';
import { postgresSpool, postgresSpoolDdl } from '../../src/postgres/index.js';
import { deadLetters } from '../../src/tracker/dead-letters.js';
import type { DeadLetterEntry, Spool } from '../../src/tracker/spool.js';
import { clientFor, useMockServer } from '../helpers.js';
import { spooledEvent } from '../tracker/spool-contract.js';
import { PREPAID } from '../tracker/support.js';
import { usePostgres } from './cluster.js';

// What the Spool contract's dead-letter tests do not reach: a spool with a retention, and a table
// made before dead letters were kept (no dead-letter table beside it yet).

const cluster = usePostgres();
const mock = useMockServer();
let pool: pg.Pool;
const made: Spool[] = [];
beforeAll(() => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url, max: 5 });
  // An idle client told the server is shutting down (57P01, the cluster stopped after the file) is
  // no failure of a test: without a listener the pool would throw it as an uncaught exception.
  pool.on('error', () => {});
});
afterAll(async () => {
  for (const spool of made) await spool.close().catch(() => {});
  await pool?.end();
});

let tables = 0;
const freshTable = (what: string) => `dl_${what}_${++tables}_${Date.now() % 100_000}`;
const letterOf = (id: string): DeadLetterEntry => ({
  id,
  reason: { type: 'refused', result: { accepted: false, error_code: 'invalid_usage_model', event_key: 'k' } },
  attempts: 4,
  firstAttemptAt: '2026-03-04T05:06:07.089Z',
  deadLetteredAt: '2026-03-04T05:06:08.000Z',
});

async function opened(options: Parameters<typeof postgresSpool>[1]): Promise<Spool> {
  const spool = postgresSpool(pool, options);
  made.push(spool);
  await spool.open();
  return spool;
}

describe('postgresSpool dead letters', () => {
  it('the letter is a row of <table>_dead_letters with the event, reason, attempts and times, in one statement with the row leaving the outbox', async () => {
    const table = freshTable('rows');
    const spool = await opened({ table });
    const event = spooledEvent(1);
    const [id] = await spool.append([event]);
    await spool.take(1);
    await spool.deadLetter?.([letterOf(id!)]);
    const { rows } = await pool.query(
      `SELECT event, reason, attempts, first_attempt_at, dead_lettered_at FROM ${table}_dead_letters`,
    );
    expect(rows).toEqual([
      {
        event,
        reason: letterOf(id!).reason,
        attempts: 4,
        first_attempt_at: new Date('2026-03-04T05:06:07.089Z'),
        dead_lettered_at: new Date('2026-03-04T05:06:08.000Z'),
      },
    ]);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
    expect((await deadLetters(spool).list())[0]).toMatchObject({
      event,
      attempts: 4,
      firstAttemptAt: '2026-03-04T05:06:07.089Z',
    });
  });

  it('with a retention, the row is marked acknowledged (kept for the audit) and the letter kept; replay inserts a new row under the same key', async () => {
    const table = freshTable('retained');
    const spool = await opened({ table, retentionMs: 60_000 });
    const event = spooledEvent(2);
    const [id] = await spool.append([event]);
    await spool.take(1);
    await spool.deadLetter?.([letterOf(id!)]);
    const { rows } = await pool.query(`SELECT id::text AS id, acked_at IS NOT NULL AS acked FROM ${table}`);
    expect(rows).toEqual([{ id, acked: true }]);
    expect(await spool.pending([id!])).toEqual([]);
    // A second move of the same row finds it acknowledged: no second letter.
    await spool.deadLetter?.([letterOf(id!)]);
    const letters = deadLetters(spool);
    expect(await letters.list()).toHaveLength(1);
    await letters.replay('all');
    const back = await spool.take(10);
    expect(back.map((entry) => entry.event)).toEqual([event]);
    expect(back[0]?.id).not.toBe(id);
  });

  it('a table made before dead letters were kept gets its dead-letter table at open; postgresSpoolDdl gives both', async () => {
    const table = freshTable('old');
    const ddl = postgresSpoolDdl({ table });
    expect(ddl).toContain(`"${table}_dead_letters"`);
    // The outbox alone, as an earlier version made it.
    const outboxOnly = ddl
      .split(';\n')
      .filter((statement) => statement && !statement.includes('_dead_letters'));
    for (const statement of outboxOnly) await pool.query(statement);
    const spool = await opened({ table });
    const [id] = await spool.append([spooledEvent(3)]);
    await spool.take(1);
    await spool.deadLetter?.([letterOf(id!)]);
    expect(await deadLetters(spool).list()).toHaveLength(1);
  });
});

describe('a tracker on postgresSpool', () => {
  it('moves a refused event into <table>_dead_letters with the service’s answer, and tells onDeadLetter too', async () => {
    const table = freshTable('tracker');
    const spool = postgresSpool(pool, { table });
    const told: string[] = [];
    const tracker = createUsageTracker(clientFor(mock.server, { maxRetries: 0 }), {
      spool,
      onDeadLetter: (event) => void told.push(event.event_key),
    });
    try {
      const { event_key } = await tracker.track({ ...PREPAID, quantity: 2 });
      await tracker.flush();
      expect(told).toEqual([event_key]);
      const { rows } = await pool.query(
        `SELECT event->>'event_key' AS key, reason, attempts FROM ${table}_dead_letters`,
      );
      expect(rows).toEqual([
        {
          key: event_key,
          reason: {
            type: 'refused',
            result: { accepted: false, error_code: 'invalid_usage_model', event_key },
          },
          attempts: 1,
        },
      ]);
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(0);
    } finally {
      await tracker.close();
    }
  });
});
