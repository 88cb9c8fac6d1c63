import { describe, expect, it } from 'vitest';
import { createNodeWebhookHandler, createWebhookHandler, type WebhookEvent } from '../../src/index.js';
import { clientFor, serveFetch, serveNode, useMockServer } from '../helpers.js';

// The SDK's webhook handlers behind real loopback servers, receiving the mock's lifecycle events.
const mock = useMockServer({ webhookRetry: { attempts: 4, delayMs: 20 } });

describe.each([
  ['createWebhookHandler', serveFetch, createWebhookHandler],
  ['createNodeWebhookHandler', serveNode, createNodeWebhookHandler],
] as const)('%s receiving the mock', (_name, serve, create) => {
  it('processes a payment failure once and confirms it with accounts.status', async () => {
    const billing = clientFor(mock.server);
    const confirmed: { event: string; active: boolean; fix: string | null }[] = [];
    const receiver = await serve(
      create({
        onEvent: async (event: WebhookEvent) => {
          const active = await billing.accounts.isActive({ account_ref_id: event.account_ref_id });
          const fix = await billing.accounts.fixSubscription({
            account_ref_id: event.account_ref_id,
            subscription_name: 'pro-plan',
            tier_name: event.label_name,
          });
          confirmed.push({ event: event.event, active, fix: fix?.url ?? null });
        },
      }) as never,
    );
    try {
      mock.server.webhooks.register(`${receiver.url}/hooks`);
      const failed = await mock.server.lifecycle.paymentFailed({ account_ref_id: 'acct_active' });
      expect(failed.delivered).toBe(true);
      expect(failed.attempts).toHaveLength(1);
      const paid = await mock.server.lifecycle.paymentSucceeded({ account_ref_id: 'acct_active' });
      expect(paid.delivered).toBe(true);

      // The processor re-sends a delivery: same transaction_id, onEvent is not run again.
      const again = await mock.server.webhooks.redeliver(failed.event.transaction_id);
      expect(again.delivered).toBe(true);

      expect(confirmed).toHaveLength(2);
      expect(confirmed[0]).toMatchObject({ event: 'payment-failed', active: false });
      expect(confirmed[0]?.fix).toMatch(/\/i\//);
      expect(confirmed[1]).toEqual({ event: 'payment-succeeded', active: true, fix: null });
    } finally {
      await receiver.close();
    }
  });

  it('a failing onEvent answers 500, the mock retries with the same id, and the retry is processed', async () => {
    let calls = 0;
    const seenIds: string[] = [];
    const receiver = await serve(
      create({
        onEvent: (event: WebhookEvent) => {
          calls++;
          seenIds.push(event.transaction_id);
          if (calls < 3) throw new Error('temporarily down');
        },
      }) as never,
    );
    try {
      mock.server.webhooks.register(receiver.url);
      const delivery = await mock.server.lifecycle.cancel({ account_ref_id: 'acct_active' });
      expect(delivery.delivered).toBe(true);
      expect(delivery.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
      expect(new Set(seenIds).size).toBe(1);
      expect(calls).toBe(3);
    } finally {
      await receiver.close();
    }
  });
});
