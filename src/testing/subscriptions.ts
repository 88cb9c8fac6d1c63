/**
 * Which subscription (and which of its invoices) a request or a simulated change means. Shared by
 * the routes and the lifecycle so that a change lands on the record the status endpoint reports.
 */
import type { InvoiceRecord, SubscriptionRecord } from './records.js';
import type { MockStore } from './store.js';

/** Subscriptions of an account to one subscription product, optionally one tier of it. */
export function matchingSubscriptions(
  store: MockStore,
  accountRefId: string,
  subscriptionName: string,
  tierName: string | undefined,
): SubscriptionRecord[] {
  const product = store.productByLabel(subscriptionName, 'subscription');
  if (!product) return [];
  return store
    .subscriptions(accountRefId)
    .filter(
      (s) =>
        s.product_manage_id === product.manage_id &&
        (tierName === undefined || s.tier_label_name === tierName),
    );
}

/**
 * When a filter matches several subscriptions (e.g. an upgrade left an inactive one behind),
 * the active one is the account's state; among equals the most recently updated wins.
 */
export function preferred(subscriptions: SubscriptionRecord[]): SubscriptionRecord | undefined {
  return [...subscriptions].sort(
    (a, b) => Number(b.is_active) - Number(a.is_active) || b.updated_at.localeCompare(a.updated_at),
  )[0];
}

/** Open invoices of one subscription, newest first: what fix-subscription can point at. */
export function openInvoices(store: MockStore, subscription: SubscriptionRecord): InvoiceRecord[] {
  return store
    .invoices({ account_ref_id: subscription.account_ref_id, status: 'open' })
    .filter((i) => i.processor_subscription_id === subscription.subscription_id);
}
