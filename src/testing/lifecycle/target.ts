import type { ProductRecord, SubscriptionRecord, TierRecord } from '../records.js';
import type { MockStore } from '../store.js';
import { matchingSubscriptions, preferred } from '../subscriptions.js';

/** Which subscription a simulated change applies to. */
export interface MockLifecycleParams {
  /** The account whose subscription changes; `subscribe` creates the account when it does not exist. */
  account_ref_id: string;
  /**
   * Label of the subscription product (e.g. `'pro-plan'`). Default: the product of the account's
   * first subscription (for `subscribe` on an account without one, the first in the catalog).
   */
  subscription?: string | undefined;
  /**
   * Label of the tier. For `subscribe`, the tier to subscribe to (default the product's first).
   * For the other changes it narrows which subscription is meant; without it, the one the status
   * endpoint reports for the product (active first, then most recently updated).
   */
  tier?: string | undefined;
}

/**
 * The existing subscription a change applies to. Throws a descriptive Error for an unknown account,
 * product or subscription, so a typo in a test fails loudly instead of changing nothing.
 */
export function existingSubscription(store: MockStore, params: MockLifecycleParams): SubscriptionRecord {
  const accountRefId = params.account_ref_id;
  if (!store.account(accountRefId)) throw new Error(`Unknown account ${accountRefId}`);
  const [first] = store.subscriptions(accountRefId);
  if (!first) throw new Error(`Account ${accountRefId} has no subscription`);
  const label = params.subscription ?? store.product(first.product_manage_id)?.label_name ?? '';
  const match = preferred(matchingSubscriptions(store, accountRefId, label, params.tier));
  if (!match) {
    const tier = params.tier === undefined ? '' : `/${params.tier}`;
    throw new Error(`Account ${accountRefId} has no subscription to ${label}${tier}`);
  }
  return match;
}

/** The product and tier a new subscription is for, with the defaults of {@link MockLifecycleParams}. */
export function newSubscriptionPlan(
  store: MockStore,
  params: MockLifecycleParams,
): { product: ProductRecord; tier: TierRecord } {
  const [first] = store.subscriptions(params.account_ref_id);
  const label =
    params.subscription ??
    (first ? store.product(first.product_manage_id)?.label_name : undefined) ??
    store.products().find((p) => p.type === 'subscription')?.label_name ??
    '';
  const product = store.productByLabel(label, 'subscription');
  if (!product) throw new Error(`Unknown subscription product ${label}`);
  const tier =
    params.tier === undefined
      ? store.tiers(product.manage_id)[0]
      : store.tier(product.manage_id, params.tier);
  if (!tier) throw new Error(`Unknown tier ${params.tier ?? '(any)'} of ${label}`);
  return { product, tier };
}
