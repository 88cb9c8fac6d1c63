// One instance of a service that records an export in its own PostgreSQL database and tracks its
// usage in the same transaction: createUsageTracker on a postgresSpool shared with the other
// instances (node-postgres, or postgres.js with DRIVER=postgres.js). Prints {"type":"ready"} once
// its spool is open; on the line "go" on stdin, runs COUNT transactions, PARALLEL at a time, each
// inserting a row (CHILD, n) into `exports_app` and tracking an event with metadata { child, n }
// through that transaction. Prints {"type":"committed","n","key","quantity"} once each COMMIT
// resolved (stdout to a pipe is synchronous: a printed line reached the test even if the process is
// SIGKILLed right after), then {"type":"committed-all"}. On "close": closes the tracker, prints
// {"type":"closed","unsent"} and exits.
import { createInterface } from 'node:readline';
import pg from 'pg';
import postgres from 'postgres';
import { postgresSpool } from '../../src/postgres/index.js';
import { createUsageTracker } from '../../src/tracker/tracker.js';
import { env, inBatches, mockBilling, print } from '../redis/print.js';

const child = Number(env('CHILD'));
const count = Number(env('COUNT'));
const parallel = Number(env('PARALLEL'));
const url = env('PG_URL');
const usePostgresJs = env('DRIVER') === 'postgres.js';
/** Pause between batches: the work spreads over a couple of seconds, so the test can kill it midway. */
const PACE_MS = 20;

const pool = new pg.Pool({ connectionString: url, max: parallel + 2 });
pool.on('error', () => {});
const sql = usePostgresJs ? postgres(url, { max: parallel + 2, onnotice: () => {} }) : undefined;

const tracker = createUsageTracker(mockBilling(), {
  spool: postgresSpool(sql ?? pool, {
    table: env('TABLE'),
    claimTtlMs: Number(env('CLAIM_TTL_MS')),
    pollMs: 500,
  }),
  onDeadLetter: (event, reason) =>
    print({ type: 'dead-letter', key: event.event_key, reason: String(reason.type) }),
});
await tracker.flush(); // opens the spool (and makes the table)
print({ type: 'ready' });

/** One export and its usage, in one transaction; resolves with the event's key once committed. */
async function exportOne(n: number, quantity: number): Promise<string> {
  const usage = {
    account_ref_id: 'acct_active',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    quantity,
    metadata: { child, n },
  };
  if (sql) {
    return sql.begin(async (tx) => {
      await tx`INSERT INTO exports_app (child, n) VALUES (${child}, ${n})`;
      return (await tracker.track(usage, { transaction: tx })).event_key;
    });
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('INSERT INTO exports_app (child, n) VALUES ($1, $2)', [child, n]);
    const { event_key } = await tracker.track(usage, { transaction: client });
    await client.query('COMMIT');
    return event_key;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function exportAll(): Promise<void> {
  await inBatches(count, parallel, PACE_MS, async (n) => {
    const quantity = 1 + ((n * 7 + child) % 5);
    const key = await exportOne(n, quantity);
    print({ type: 'committed', n, key, quantity });
  });
  print({ type: 'committed-all' });
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'go') {
    exportAll().catch((error: unknown) => print({ type: 'failed', error: String(error) }));
  } else if (line === 'close') {
    const { unsent } = await tracker.close({ timeoutMs: 20_000 });
    print({ type: 'closed', unsent });
    await Promise.all([pool.end(), sql?.end()]);
    process.exit(0);
  }
}
