// Usage and webhooks in the app's own PostgreSQL transaction (billing-sdk/postgres), against the
// embedded mock. Needs `npm install pg` and a database you may create tables in:
//   DATABASE_URL=postgres://user@127.0.0.1:5432/db node examples/postgres-outbox.mjs
// It makes (and drops) the tables example_exports and example_grants, and the SDK's own
// billing_sdk_example_outbox and billing_sdk_example_inbox.

import { BillingClient, createUsageTracker, createWebhookHandler } from 'billing-sdk';
import { postgresDedupeStore, postgresSpool } from 'billing-sdk/postgres';
import { DEMO, startMockServer } from 'billing-sdk/testing';
import pg from 'pg';

if (!process.env.DATABASE_URL) {
  console.error('Set DATABASE_URL to a PostgreSQL database this example may create tables in.');
  process.exit(2);
}

const mock = await startMockServer();
const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
pool.on('error', (error) => console.error('postgres pool:', error.message));
const account_ref_id = DEMO.accounts.active;
const usage = { account_ref_id, product_code: 'api-gateway', meter_code: DEMO.meters.apiCalls, quantity: 1 };
const recorded = (key) => mock.store.usageEvents.filter((e) => e.event_key === key).length;

await pool.query('CREATE TABLE IF NOT EXISTS example_exports (id text, usage_key text)');
await pool.query('CREATE TABLE IF NOT EXISTS example_grants (transaction_id text, account text)');
const tracker = createUsageTracker(billing, {
  spool: postgresSpool(pool, { table: 'billing_sdk_example_outbox' }),
  onError: (error) => console.error('tracker:', error.message),
});

/** One export: its row and its usage event in one transaction, committed or rolled back. */
async function exportReport(id, { fail }) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { event_key } = await tracker.track(usage, { transaction: client });
    await client.query('INSERT INTO example_exports (id, usage_key) VALUES ($1, $2)', [id, event_key]);
    if (fail) throw new Error('the export failed after tracking');
    await client.query('COMMIT');
    return event_key;
  } catch (error) {
    await client.query('ROLLBACK');
    console.log(`  ${id}: ${error.message}: rolled back`);
    return undefined;
  } finally {
    client.release();
  }
}

try {
  console.log('usage in the transaction of the action:');
  const committed = await exportReport('rep_1', { fail: false });
  // The rolled-back event's key is gone with its transaction: nothing can send it.
  await exportReport('rep_2', { fail: true });
  await tracker.flush();
  console.log(`  rep_1 committed: its event recorded ${recorded(committed)} time(s)`);
  const exports = (await pool.query('SELECT count(*)::int AS n FROM example_exports')).rows[0].n;
  const events = mock.store.usageEvents.filter((e) => e.account_ref_id === account_ref_id).length;
  console.log(`  rows in example_exports: ${exports}; usage events at the service: ${events}`);

  console.log('a webhook applied with the app data, once:');
  const handler = createWebhookHandler({
    dedupe: postgresDedupeStore(pool, { table: 'billing_sdk_example_inbox' }),
    async onEvent(event, { transaction }) {
      // Committed together with the event's "done" mark, or not at all.
      await transaction.query('INSERT INTO example_grants (transaction_id, account) VALUES ($1, $2)', [
        event.transaction_id,
        event.account_ref_id,
      ]);
    },
  });
  const payload = {
    event: 'payment-succeeded',
    transaction_id: 'txn_example_1',
    account_ref_id,
    subscription_id: 'sub_example',
    is_active: true,
    label_name: 'pro',
    timestamp: new Date().toISOString(),
  };
  for (const attempt of ['first delivery', 'redelivery']) {
    const response = await handler(
      new Request('http://app.test/webhooks/billing', { method: 'POST', body: JSON.stringify(payload) }),
    );
    console.log(`  ${attempt}: ${response.status} ${await response.text()}`);
  }
  const grants = (
    await pool.query("SELECT count(*)::int AS n FROM example_grants WHERE transaction_id = 'txn_example_1'")
  ).rows[0].n;
  console.log(`  rows in example_grants for txn_example_1: ${grants}`);
} finally {
  await tracker.close();
  await pool.query(
    'DROP TABLE IF EXISTS example_exports, example_grants, billing_sdk_example_outbox, billing_sdk_example_inbox',
  );
  await pool.end();
  await mock.close();
}
