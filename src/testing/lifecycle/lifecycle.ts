import { randomUUID } from 'node:crypto';
import type { SubscriptionRecord } from '../records.js';
import type { MockStore } from '../store.js';
import type { WebhookDelivery } from '../webhooks/deliver.js';
import type { MockLifecycleEvent, MockWebhookPayload } from '../webhooks/payload.js';
import { CHANGES } from './changes.js';
import { existingSubscription, type MockLifecycleParams, newSubscriptionPlan } from './target.js';

/**
 * Simulated processor events. Each changes the store first (so a receiver that calls the status
 * endpoint on receipt sees the new state), then posts the webhook; the promise settles when the
 * delivery has finished, delivered or given up, so a test can await the whole round trip.
 * Unknown accounts, products, tiers or subscriptions reject with an Error and change nothing.
 */
export interface MockLifecycle {
  /** A new active subscription; an unknown account is created with `<account_ref_id>@example.com`. */
  subscribe(params: MockLifecycleParams): Promise<WebhookDelivery>;
  /** Active again; its open invoices are paid (or a paid period invoice is added); a completed transaction. */
  paymentSucceeded(params: MockLifecycleParams): Promise<WebhookDelivery>;
  /** Not active; a new open, past-due invoice at the tier price (fix-subscription's url); a failed transaction. */
  paymentFailed(params: MockLifecycleParams): Promise<WebhookDelivery>;
  /** Not active; open invoices become void, so fix-subscription answers the empty body. */
  cancel(params: MockLifecycleParams): Promise<WebhookDelivery>;
  /**
   * Still active until the period ends. The scheduled end is kept in the store (`cancel_at_period_end`
   * of the subscription record), not served: the reference has no field for it.
   */
  cancelAtPeriodEnd(params: MockLifecycleParams): Promise<WebhookDelivery>;
  /** Not active with an open invoice (the first payment failed); a failed transaction. */
  incomplete(params: MockLifecycleParams): Promise<WebhookDelivery>;
}

function payload(
  store: MockStore,
  event: MockLifecycleEvent,
  subscription: SubscriptionRecord,
): MockWebhookPayload {
  return {
    event,
    // Random rather than from the store's counter: the counter restarts on reset, and a receiver
    // that dedupes across tests would then drop a new webhook as a retry of an old one.
    transaction_id: randomUUID(),
    account_ref_id: subscription.account_ref_id,
    subscription_id: subscription.subscription_id,
    is_active: subscription.is_active,
    label_name: subscription.tier_label_name,
    timestamp: store.now(),
  };
}

/** Creates the lifecycle simulation of one mock, posting through `send`. */
export function createLifecycle(
  store: MockStore,
  send: (payload: MockWebhookPayload) => Promise<WebhookDelivery>,
): MockLifecycle {
  const change =
    (event: keyof typeof CHANGES) =>
    async (params: MockLifecycleParams): Promise<WebhookDelivery> => {
      const subscription = existingSubscription(store, params);
      CHANGES[event](store, subscription);
      return send(payload(store, event, subscription));
    };
  return {
    async subscribe(params) {
      const accountRefId = params.account_ref_id;
      if (accountRefId === '') throw new Error('account_ref_id is required');
      const { product, tier } = newSubscriptionPlan(store, params);
      if (!store.account(accountRefId)) {
        store.addAccount({ account_ref_id: accountRefId, customer_email: `${accountRefId}@example.com` });
      }
      const subscription = store.addSubscription({
        account_ref_id: accountRefId,
        product_manage_id: product.manage_id,
        tier_label_name: tier.label_name,
        is_active: true,
      });
      return send(payload(store, 'subscription-created', subscription));
    },
    paymentSucceeded: change('payment-succeeded'),
    paymentFailed: change('payment-failed'),
    cancel: change('subscription-cancelled'),
    cancelAtPeriodEnd: change('subscription-cancel-at-period-end'),
    incomplete: change('subscription-incomplete'),
  };
}
