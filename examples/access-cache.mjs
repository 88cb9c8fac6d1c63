// Gate features without a round trip: an access cache in front of the billing API, dropped by the
// service's lifecycle webhooks. Run: node examples/access-cache.mjs (against the embedded mock).

import { createServer } from 'node:http';
import { BillingClient, createAccessCache, createNodeWebhookHandler } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';

const mock = await startMockServer();
const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl });
const access = createAccessCache(billing, {
  ttlMs: 60_000, // a "yes" is reused for a minute
  denyTtlMs: 5_000, // a "no" for 5 s: a customer who just paid gets in fast even without a webhook
  onError: (error) => console.error(`  access cache: ${error.message}`),
});

// The webhook receiver invalidates the event's account before onEvent runs; the payload itself
// (its is_active) never becomes an answer: deliveries are not signed, so it is not trusted.
const receiver = createServer(
  createNodeWebhookHandler({
    access,
    onEvent: async (event) => {
      const active = await access.isActive({ account_ref_id: event.account_ref_id });
      console.log(`  webhook ${event.event}: ${event.account_ref_id} is ${active ? 'active' : 'not active'}`);
    },
  }),
);
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
mock.webhooks.register(`http://127.0.0.1:${receiver.address().port}/webhooks/billing`);

/** What a request handler of the app does on every request: one check, from memory when it can be. */
async function handleExport(account_ref_id) {
  const allowed = await access.hasEntitlement({
    account_ref_id,
    product_code: 'ai-assistant',
    entitlement_code: 'export',
  });
  return allowed ? 'export started' : 'upgrade required';
}

try {
  const requestsBefore = mock.requests.count();
  const started = performance.now();
  for (let i = 0; i < 1_000; i += 1) {
    await access.isActive({ account_ref_id: 'acct_active' });
    await handleExport('acct_active');
  }
  const ms = performance.now() - started;
  console.log(
    `2000 checks in ${ms.toFixed(1)} ms: ${mock.requests.count() - requestsBefore} requests reached the service`,
  );

  console.log('payment fails:');
  await mock.lifecycle.paymentFailed({ account_ref_id: 'acct_active' });
  console.log(`  isActive(acct_active) ${await access.isActive({ account_ref_id: 'acct_active' })}`);

  console.log('payment succeeds:');
  await mock.lifecycle.paymentSucceeded({ account_ref_id: 'acct_active' });
  console.log(`  isActive(acct_active) ${await access.isActive({ account_ref_id: 'acct_active' })}`);

  const { hits, misses, stale, refreshes, invalidations, entries } = access.stats();
  console.log(`stats: ${JSON.stringify({ hits, misses, stale, refreshes, invalidations, entries })}`);
} finally {
  await access.close();
  await new Promise((resolve) => receiver.close(resolve));
  await mock.close();
}
