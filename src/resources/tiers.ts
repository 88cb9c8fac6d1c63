import type { RequestOptions } from '../core/options.js';
import type { PageEnvelope, PagePromise } from '../core/pagination.js';
import { pageRules, segment } from '../internal/checks.js';
import { endpoint } from '../internal/endpoint.js';
import { APIResource } from '../internal/resource.js';
import { path } from '../internal/url.js';
import { envelope } from '../schemas/common.js';
import { type SubscriptionTier, SubscriptionTierSchema } from '../schemas/tier.js';

/** Parameters of {@link Tiers.list}. */
export interface TierListParams {
  /** Label of a subscription product: only its tiers. Omit for every tier. */
  subscription_name?: string | undefined;
  /** Page to start from (1-based). Default 1. */
  page?: number | undefined;
  /** Items per page, 1–100. Default 20. */
  page_size?: number | undefined;
}

const listTiers = endpoint<TierListParams, PageEnvelope<SubscriptionTier>>({
  operation: 'tiers.list',
  method: 'GET',
  rules: { subscription_name: [segment], ...pageRules },
  build: ({ subscription_name, ...query }) => ({
    path: subscription_name === undefined ? 'tiers/' : path`tiers/${{ subscription_name }}/`,
    query,
  }),
  schema: envelope(SubscriptionTierSchema),
});

/** `billing.tiers`: subscription tiers. */
export class Tiers extends APIResource {
  /**
   * Lists every tier, or one subscription product's tiers.
   *
   * @example
   * ```ts
   * const tiers = await billing.tiers.list({ subscription_name: 'pro-plan' }).toArray();
   * ```
   */
  list(params?: TierListParams, options?: RequestOptions): PagePromise<SubscriptionTier> {
    return this._list(listTiers, params, options);
  }
}
