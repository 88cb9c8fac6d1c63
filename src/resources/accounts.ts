import type { APIPromise } from '../core/api-promise.js';
import { NotFoundError } from '../core/errors/index.js';
import type { RequestOptions } from '../core/options.js';
import { type CrossRule, required, segment, text } from '../internal/checks.js';
import { endpoint } from '../internal/endpoint.js';
import { APIResource } from '../internal/resource.js';
import { path } from '../internal/url.js';
import { type AccountStatus, AccountStatusSchema, isActiveIn } from '../schemas/account-status.js';
import { type FixSubscriptionResult, FixSubscriptionSchema } from '../schemas/fix-subscription.js';

/** Parameters of {@link Accounts.status} and {@link Accounts.isActive}. */
export interface AccountStatusParams {
  /** Your identifier of the account (sent in the URL path). */
  account_ref_id: string;
  /** Subscription product label; narrows the answer to that subscription. */
  subscription?: string | undefined;
  /** Tier label; only together with `subscription`. */
  tier?: string | undefined;
}

/** Parameters of {@link Accounts.fixSubscription}. */
export interface FixSubscriptionParams {
  /** Your identifier of the account whose subscription failed to renew. */
  account_ref_id: string;
  /** `label_name` of the subscription product. */
  subscription_name: string;
  /** `label_name` of the tier the account is subscribed to. */
  tier_name: string;
}

/** The reference's one not-found body: the only 404 that means "this account or tier is not active". */
const NOT_FOUND = 'Account not found or invalid subscription tier';

/**
 * Whether `error` is the service's documented not-found answer (unknown account or tier), which
 * means "no access"; any other 404 (a wrong `baseUrl`, a proxy's page) is a failure.
 */
export const isNotFoundAnswer = (error: unknown): error is NotFoundError =>
  error instanceof NotFoundError && error.error === NOT_FOUND;

const tierNeedsSubscription: CrossRule = (p) =>
  p.tier !== undefined && p.subscription === undefined
    ? [{ field: 'tier', message: 'requires subscription' }]
    : [];

/** `accounts.status`; also the checks of the access cache's account lookups. */
export const accountStatus = endpoint<AccountStatusParams, AccountStatus>({
  operation: 'accounts.status',
  method: 'GET',
  rules: { account_ref_id: [required, segment], subscription: [text], tier: [text] },
  cross: tierNeedsSubscription,
  build: ({ account_ref_id, ...query }) => ({ path: path`account/${{ account_ref_id }}/status/`, query }),
  schema: AccountStatusSchema,
});

const isActive = endpoint<AccountStatusParams, AccountStatus, boolean>({
  ...accountStatus,
  operation: 'accounts.isActive',
  transform: isActiveIn,
  // Any other 404 (a wrong baseUrl, a proxy's page) throws: answering false would silently put
  // every user behind the paywall.
  recover: (error) => (isNotFoundAnswer(error) ? false : undefined),
});

const fixSubscription = endpoint<
  FixSubscriptionParams,
  { url?: string | undefined } | null,
  FixSubscriptionResult
>({
  operation: 'accounts.fixSubscription',
  method: 'GET',
  rules: {
    account_ref_id: [required, text],
    subscription_name: [required, text],
    tier_name: [required, text],
  },
  build: (query) => ({ path: 'fix-subscription/', query }),
  schema: FixSubscriptionSchema,
  allowEmpty: true,
  // Empty means "nothing to fix" whether it came as zero bytes or as `{}`.
  transform: (result) => (result?.url ? { ...result, url: result.url } : null),
});

/** `billing.accounts`: live subscription state of an account. */
export class Accounts extends APIResource {
  /**
   * The account's live subscription state: the single form for one subscription (or a filter), the
   * multiple form when the account has several. {@link subscriptionsOf} lists either.
   *
   * @example
   * ```ts
   * const status = await billing.accounts.status({ account_ref_id: 'acct_1', subscription: 'pro-plan' });
   * ```
   */
  status(params: AccountStatusParams, options?: RequestOptions): APIPromise<AccountStatus> {
    return this._call(accountStatus, params, options);
  }

  /**
   * Whether the account has an active subscription (matching the filter, when given). The service's
   * documented not-found answer (unknown account or tier) is `false`; any other error throws,
   * including a 404 with another body (such as a wrong `baseUrl`).
   *
   * @example
   * ```ts
   * if (!(await billing.accounts.isActive({ account_ref_id: user.id }))) return redirectToPaywall();
   * ```
   */
  isActive(params: AccountStatusParams, options?: RequestOptions): APIPromise<boolean> {
    return this._call(isActive, params, options);
  }

  /**
   * The hosted payment URL of a past-due or incomplete subscription's failed invoice, or `null`
   * when there is nothing to fix (the API answers with an empty body).
   */
  fixSubscription(
    params: FixSubscriptionParams,
    options?: RequestOptions,
  ): APIPromise<FixSubscriptionResult> {
    return this._call(fixSubscription, params, options);
  }
}
