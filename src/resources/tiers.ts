import { check, pageRules, segment } from '../core/checks.js';
import type { RequestOptions } from '../core/options.js';
import type { PagePromise } from '../core/pagination.js';
import type { ApiCore } from '../core/request.js';
import { path } from '../core/url.js';
import { envelope } from '../schemas/common.js';
import { type SubscriptionTier, SubscriptionTierSchema } from '../schemas/tier.js';

/** Parameters of {@link Tiers.list}. */
export interface TierListParams {
  /** Label of a subscription product: only its tiers. Omit for every tier. */
  subscription_name?: string;
  /** Page to start from (1-based). Default 1. */
  page?: number;
  /** Items per page, 1–100. Default 20. */
  page_size?: number;
}

const TierPage = envelope(SubscriptionTierSchema);
const rules = { subscription_name: [segment], ...pageRules };

/** `billing.tiers`: subscription tiers. */
export class Tiers {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

  /**
   * Lists every tier, or one subscription product's tiers.
   *
   * @example
   * ```ts
   * const tiers = await billing.tiers.list({ subscription_name: 'pro-plan' }).toArray();
   * ```
   */
  list(params: TierListParams = {}, options?: RequestOptions): PagePromise<SubscriptionTier> {
    return this.#core.list(
      {
        operation: 'tiers.list',
        schema: TierPage,
        prepare: () => {
          const { subscription_name, ...query } = check('tiers.list', params, rules);
          return {
            path: subscription_name === undefined ? 'tiers/' : path`tiers/${subscription_name}/`,
            query,
          };
        },
      },
      options,
    );
  }
}
