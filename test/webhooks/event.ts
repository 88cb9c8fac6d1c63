import type { WebhookEvent } from '../../src/index.js';

/** A valid lifecycle event with a fresh `transaction_id`, with `overrides` applied. */
export const event = (overrides: Partial<WebhookEvent> = {}): WebhookEvent => ({
  event: 'subscription-created',
  transaction_id: `tx-${Math.random().toString(36).slice(2)}`,
  account_ref_id: 'acct_1',
  subscription_id: 'sub_1',
  is_active: true,
  label_name: 'pro',
  timestamp: '2026-01-01T00:00:00Z',
  ...overrides,
});
