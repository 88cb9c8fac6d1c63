import { check, required, segment, text } from '../core/checks.js';
import { NotFoundError } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import type { ApiCore } from '../core/request.js';
import { path } from '../core/url.js';
import { type AccountStatus, AccountStatusSchema, subscriptionsOf } from '../schemas/account-status.js';
import { type FixSubscriptionResult, FixSubscriptionSchema } from '../schemas/fix-subscription.js';

/** Parameters of {@link Accounts.status} and {@link Accounts.isActive}. */
export interface AccountStatusParams {
  account_ref_id: string;
  /** Subscription product label; narrows the answer to that subscription. */
  subscription?: string;
  /** Tier label; only together with `subscription`. */
  tier?: string;
}

/** Parameters of {@link Accounts.fixSubscription}. */
export interface FixSubscriptionParams {
  account_ref_id: string;
  subscription_name: string;
  tier_name: string;
}

const statusRules = { account_ref_id: [required, segment], subscription: [text], tier: [text] };
const tierNeedsSubscription = (p: Record<string, unknown>) =>
  p.tier !== undefined && p.subscription === undefined
    ? [{ field: 'tier', message: 'requires subscription' }]
    : [];
const fixRules = {
  account_ref_id: [required, text],
  subscription_name: [required, text],
  tier_name: [required, text],
};

/** `billing.accounts`: live subscription state of an account. */
export class Accounts {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

  /**
   * The account's live subscription state: the single form for one subscription (or a filter), the
   * multiple form when the account has several. {@link subscriptionsOf} lists either.
   *
   * @example
   * ```ts
   * const status = await billing.accounts.status({ account_ref_id: 'acct_1', subscription: 'pro-plan' });
   * ```
   */
  status(params: AccountStatusParams, options?: RequestOptions): Promise<AccountStatus> {
    return this.#core.call(options, () => {
      const { account_ref_id, ...query } = check(
        'accounts.status',
        params,
        statusRules,
        tierNeedsSubscription,
      );
      return {
        operation: 'accounts.status',
        method: 'GET',
        path: path`account/${account_ref_id}/status/`,
        query,
        schema: AccountStatusSchema,
      };
    });
  }

  /**
   * Whether the account has an active subscription (matching the filter, when given). An account or
   * tier the service does not know (404) is not active.
   *
   * @example
   * ```ts
   * if (!(await billing.accounts.isActive({ account_ref_id: user.id }))) return redirectToPaywall();
   * ```
   */
  async isActive(params: AccountStatusParams, options?: RequestOptions): Promise<boolean> {
    try {
      return subscriptionsOf(await this.status(params, options)).some((s) => s.is_active);
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /**
   * The hosted payment URL of a past-due or incomplete subscription's failed invoice, or `null`
   * when there is nothing to fix (the API answers with an empty body).
   */
  async fixSubscription(
    params: FixSubscriptionParams,
    options?: RequestOptions,
  ): Promise<FixSubscriptionResult> {
    const result = await this.#core.call(options, () => ({
      operation: 'accounts.fixSubscription',
      method: 'GET',
      path: 'fix-subscription/',
      query: check('accounts.fixSubscription', params, fixRules),
      schema: FixSubscriptionSchema,
      allowEmpty: true,
    }));
    // Empty means "nothing to fix" whether it came as zero bytes or as `{}`.
    return result?.url ? { ...result, url: result.url } : null;
  }
}
