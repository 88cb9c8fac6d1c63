import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Child,
  expectClosedClean,
  type Message,
  slowEventPosts,
  useFleet,
  waitUntil,
} from '../redis/processes.js';
import { usePostgres } from './cluster.js';

// Three instances of a service (two on node-postgres, one on postgres.js) each commit exports and
// their usage in one transaction, on one postgresSpool table, against the mock. Instance 0 is
// SIGKILLed midway while it holds claimed rows; the others claim those once the lease expired and
// send them with their original keys. In the end every export row of the app's table has its usage
// recorded exactly once, and nothing else was recorded (counted per (child, n), not hidden by the
// idempotency key); also with 10% of the mock's answers dropped after it recorded the event.

const CHILDREN = 3;
const COUNT = 300; // exports per child
const PARALLEL = 8;
const CLAIM_TTL_MS = 1_000;

const cluster = usePostgres();
let pool: pg.Pool;
const fleet = useFleet('../postgres/relay-process.ts', 60_000);

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: cluster.cluster.url });
  // node-postgres asks every pool for one: an idle client whose connection ends (a test kills
  // backends, the cluster stops at the end) is an 'error' event of the pool, unheard a crash.
  pool.on('error', () => {});
  await pool.query('CREATE TABLE IF NOT EXISTS exports_app (child int NOT NULL, n int NOT NULL, run text)');
}, 60_000);
afterAll(async () => {
  await pool?.end();
});

const committed = (c: Child) =>
  c.messages.filter((m): m is Message & { n: number; key: string } => m.type === 'committed');

async function scenario(): Promise<void> {
  const table = `relay_${randomUUID().slice(0, 8)}`;
  await pool.query('TRUNCATE exports_app');
  const before = new Set(fleet.mock.store.usageEvents.map((e) => e.event_key));
  const children = Array.from({ length: CHILDREN }, (_, i) =>
    fleet.spawn({
      PG_URL: cluster.cluster.url,
      TABLE: table,
      DRIVER: i === 1 ? 'postgres.js' : 'pg',
      CLAIM_TTL_MS: String(CLAIM_TTL_MS),
      CHILD: String(i),
      COUNT: String(COUNT),
      PARALLEL: String(PARALLEL),
    }),
  );
  try {
    // One after the other would do too: the DDL takes turns on an advisory lock.
    await Promise.all(children.map((c) => c.next((m) => m.type === 'ready', 20_000)));
    for (const c of children) c.send('go');

    // Instance 0 dies (SIGKILL) midway, while rows are claimed by it: leased, not acknowledged.
    const [doomed, ...survivors] = children as [Child, ...Child[]];
    await waitUntil(
      'instance 0 midway, holding rows',
      async () => {
        if (committed(doomed).length < COUNT * 0.3) return false;
        const { rows } = await pool.query(
          `SELECT count(*)::int AS n FROM "${table}" WHERE lease_until > now() AND claimed_by IS NOT NULL`,
        );
        return rows[0].n > 0;
      },
      () => ({ committed: committed(doomed).length, last: doomed.messages.at(-1) }),
    );
    await doomed.kill('SIGKILL');
    expect(committed(doomed).length).toBeLessThan(COUNT); // it really died midway

    await Promise.all(survivors.map((c) => c.next((m) => m.type === 'committed-all', 60_000)));
    // The survivors send everything, the dead instance's rows included (claimed once the lease expired).
    await waitUntil(
      'the outbox drained',
      async () => (await pool.query(`SELECT count(*)::int AS n FROM "${table}"`)).rows[0].n === 0,
      () => children.map((c) => c.messages.at(-1)),
      60_000,
    );
    await expectClosedClean(survivors, children);

    // The app's side: every export that committed, per (child, n).
    const exports = (await pool.query('SELECT child, n FROM exports_app')).rows as {
      child: number;
      n: number;
    }[];
    const exported = new Set(exports.map((e) => `${e.child}:${e.n}`));
    expect(exported.size).toBe(exports.length);
    // The billing side: what the mock recorded in this scenario, per (child, n), whatever its key.
    const recorded = fleet.mock.store.usageEvents.filter((e) => !before.has(e.event_key));
    const byExport = new Map<string, number>();
    for (const e of recorded) {
      const { child, n } = e.metadata as { child: number; n: number };
      byExport.set(`${child}:${n}`, (byExport.get(`${child}:${n}`) ?? 0) + 1);
    }
    expect([...byExport.entries()].filter(([, times]) => times !== 1)).toEqual([]);
    // Exactly the committed exports: none missing (the dead instance's included), none extra.
    expect([...byExport.keys()].sort()).toEqual([...exported].sort());
    // Every commit a child saw resolve is among them, under the key track returned.
    const keys = new Set(recorded.map((e) => e.event_key));
    for (const c of children) for (const m of committed(c)) expect(keys.has(m.key)).toBe(true);
    expect(exports.length).toBeGreaterThanOrEqual(committed(doomed).length + (CHILDREN - 1) * COUNT);
  } finally {
    await Promise.all(children.map((c) => c.kill()));
  }
}

describe('3 relay processes on one postgresSpool table, one SIGKILLed midway', () => {
  it('every committed export has its usage recorded exactly once', async () => {
    // Each request takes 20 ms, so sends lag behind commits and rows wait in the table.
    slowEventPosts(fleet.mock);
    await scenario();
  }, 120_000);

  it('the same with 10% of the answers dropped after the mock recorded the event', async () => {
    slowEventPosts(fleet.mock, true);
    await scenario();
  }, 120_000);
});
