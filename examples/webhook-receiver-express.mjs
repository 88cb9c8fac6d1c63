// A webhook receiver (Express) that confirms each event with accounts.status before acting.
// Run: node examples/webhook-receiver-express.mjs (drives the embedded mock's lifecycle events).

import { BillingClient, createNodeWebhookHandler, subscriptionsOf } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';
import express from 'express';

/**
 * Builds the app. Deliveries are not signed by the service, so the handler never trusts the payload's
 * is_active: it asks the API. Duplicates (same transaction_id) are answered without running onEvent.
 */
export function createApp({ billing, accessStore, log = () => {} }) {
  const app = express();
  app.post(
    '/webhooks/billing',
    createNodeWebhookHandler({
      onEvent: async (event) => {
        const status = await billing.accounts.status({ account_ref_id: event.account_ref_id });
        const active = subscriptionsOf(status).some((s) => s.is_active);
        accessStore.set(event.account_ref_id, active);
        log(`${event.event} for ${event.account_ref_id}: access ${active ? 'granted' : 'revoked'}`);
      },
      onError: (err, event) => log(`failed to process ${event.transaction_id}: ${err.message}`),
    }),
  );
  return app;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = await startMockServer();
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl });
  const access = new Map();
  const app = createApp({ billing, accessStore: access, log: (line) => console.log(`  receiver: ${line}`) });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    mock.webhooks.register(`http://127.0.0.1:${server.address().port}/webhooks/billing`);

    console.log('payment fails:');
    const failed = await mock.lifecycle.paymentFailed({ account_ref_id: 'acct_active' });
    const fix = await billing.accounts.fixSubscription({
      account_ref_id: 'acct_active',
      subscription_name: 'pro-plan',
      tier_name: 'pro',
    });
    console.log(`  acct_active can pay at ${fix?.url}`);

    console.log('payment succeeds:');
    await mock.lifecycle.paymentSucceeded({ account_ref_id: 'acct_active' });

    console.log('the processor re-sends the failure (same transaction_id):');
    const again = await mock.webhooks.redeliver(failed.event.transaction_id);
    console.log(`  answered ${again.attempts.at(-1)?.status}, onEvent not run again`);

    console.log(`access of acct_active: ${access.get('acct_active') ? 'granted' : 'revoked'}`);
    if (access.get('acct_active') !== true) throw new Error('expected access to be granted');
  } finally {
    server.closeAllConnections();
    server.close();
    await mock.close();
  }
}
