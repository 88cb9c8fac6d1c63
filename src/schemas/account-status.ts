import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import { timestamp } from './common.js';
import { type SubscriptionTier, SubscriptionTierSchema } from './tier.js';

/** Account status when the lookup resolves to one subscription (the reference's single form). */
export interface AccountStatusSingle {
  /** Your identifier of the account, echoed by the service. */
  account_ref_id: string;
  /**
   * Whether the subscription is active: the yes/no access signal. A failed invoice can leave a
   * subscription past due or incomplete; how those conditions show here is not stated by the
   * reference.
   */
  is_active: boolean;
  /** The customer's e-mail address; the reference says e-mail addresses appear for identification only. */
  customer_email: string;
  /**
   * An ISO 8601 UTC string; whether it dates the account or the subscription is not stated by the
   * reference.
   */
  created_at: string;
  /**
   * An ISO 8601 UTC string; whether it dates the account or the subscription is not stated by the
   * reference.
   */
  updated_at: string;
  /** The tier the subscription is to. */
  subscription_tier: SubscriptionTier;
}

/** One subscription of an account, as listed in the multiple form (or built by {@link subscriptionsOf}). */
export interface AccountSubscription {
  /** Whether this subscription is active. */
  is_active: boolean;
  /** When the subscription was created: an ISO 8601 UTC string. */
  created_at: string;
  /** When the subscription last changed: an ISO 8601 UTC string. */
  updated_at: string;
  /** The tier the subscription is to. */
  subscription_tier: SubscriptionTier;
}

/** Account status when the account has several subscriptions and no filter narrowed it to one. */
export interface AccountStatusMultiple {
  /** Your identifier of the account, echoed by the service. */
  account_ref_id: string;
  /** The customer's e-mail address; the reference says e-mail addresses appear for identification only. */
  customer_email: string;
  /**
   * The account's subscriptions, each with its own `is_active`; their order is not stated by the reference.
   */
  subscriptions: AccountSubscription[];
  /**
   * How many subscriptions the account has, an integer. The reference does not say whether it can
   * differ from `subscriptions.length`.
   */
  total_subscriptions: number;
}

/** Either form of the account status; tell them apart with {@link isMultipleStatus} or use {@link subscriptionsOf}. */
export type AccountStatus = AccountStatusSingle | AccountStatusMultiple;

const tier = SubscriptionTierSchema as unknown as z.ZodMiniType<SubscriptionTier>;

/** Validates an {@link AccountStatusSingle}. */
export const AccountStatusSingleSchema: Schema<AccountStatusSingle> = z.looseObject({
  account_ref_id: z.string(),
  is_active: z.boolean(),
  customer_email: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  subscription_tier: tier,
});

/** Validates an {@link AccountStatusMultiple}. */
export const AccountStatusMultipleSchema: Schema<AccountStatusMultiple> = z.looseObject({
  account_ref_id: z.string(),
  customer_email: z.string(),
  subscriptions: z.array(
    z.looseObject({
      is_active: z.boolean(),
      created_at: timestamp,
      updated_at: timestamp,
      subscription_tier: tier,
    }),
  ),
  total_subscriptions: z.int(),
});

/** Validates either form: a body with `subscriptions` is the multiple form. */
export const AccountStatusSchema: Schema<AccountStatus> = z.union([
  AccountStatusMultipleSchema as unknown as z.ZodMiniType<AccountStatusMultiple>,
  AccountStatusSingleSchema as unknown as z.ZodMiniType<AccountStatusSingle>,
]);

/** True for the multiple form. */
export function isMultipleStatus(status: AccountStatus): status is AccountStatusMultiple {
  return Array.isArray((status as AccountStatusMultiple).subscriptions);
}

/**
 * Whether either form has an active subscription: the yes/no the reference says is always
 * derivable from `is_active`. Read where it is, no list made (a gated route asks on every request).
 */
export function isActiveIn(status: AccountStatus): boolean {
  return isMultipleStatus(status) ? status.subscriptions.some(isActive) : status.is_active;
}

const isActive = (s: AccountSubscription): boolean => s.is_active;

/**
 * The subscriptions of either form as one list: the single form becomes a list of one.
 *
 * @example
 * ```ts
 * const status = await billing.accounts.status({ account_ref_id: 'acct_1' });
 * const active = subscriptionsOf(status).filter((s) => s.is_active).map((s) => s.subscription_tier.label_name);
 * ```
 */
export function subscriptionsOf(status: AccountStatus): AccountSubscription[] {
  if (isMultipleStatus(status)) return status.subscriptions;
  const { is_active, created_at, updated_at, subscription_tier } = status;
  return [{ is_active, created_at, updated_at, subscription_tier }];
}
