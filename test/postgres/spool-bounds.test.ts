import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingClient, createUsageTracker, type UsageTracker } from '../../src/index.js';
import { postgresSpool } from '../../src/postgres/index.js';
import { useMockServer } from '../helpers.js';
import { usePostgres } from './cluster.js';
import { connect, DRIVERS } from './connect.js';

// A migration's LOCK TABLE on the outbox: every statement of the spool waits behind it. Each is
// bounded by the spool's timeoutMs, so the tracker's close() returns on time, counting the unsent.

const cluster = usePostgres();
const mock = useMockServer();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
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

const event = () => ({
  account_ref_id: 'acct_active',
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  quantity: 1,
});

describe.each(DRIVERS)('postgresSpool under a LOCK TABLE (%s)', (kind) => {
  it('close({ timeoutMs }) returns on time, the statements cancelled and the event counted unsent', async () => {
    const { db, close } = await connect(kind, cluster.cluster.url);
    const table = `bounds_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const billing = new BillingClient({ baseUrl: mock.server.baseUrl, apiKey: mock.server.apiKey });
    const usage = createUsageTracker(billing, {
      spool: postgresSpool(db, { table, pollMs: 50, timeoutMs: 300 }),
      onError: () => {},
    });
    trackers.push(usage);
    const recorded = () => mock.server.store.usageEvents.filter((e) => e.event_key === first).length;
    const { event_key: first } = await usage.track(event());
    await usage.flush();
    const locker = await pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`);
      const tracked = usage.track(event()).then(
        () => 'queued',
        () => 'refused',
      );
      await sleep(100); // a poll's take is waiting on the lock as well
      const started = performance.now();
      const closed = await Promise.race([
        usage.close({ timeoutMs: 1_000 }),
        sleep(5_000).then(() => 'still pending after 5 s'),
      ]);
      const took = performance.now() - started;
      expect(closed).not.toBe('still pending after 5 s');
      expect(took).toBeLessThan(1_000 + 2 * 300 + 1_000);
      // Accepted in memory and never written: counted unsent; or refused at once: not counted.
      const outcome = await tracked;
      expect((closed as { unsent: number }).unsent).toBe(outcome === 'queued' ? 1 : 0);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      locker.release();
      await close();
    }
    expect(recorded()).toBe(1);
  }, 20_000);
});
