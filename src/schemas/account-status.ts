import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';
import { timestamp } from './common.js';
import { type SubscriptionTier, SubscriptionTierSchema } from './tier.js';

/** Account status when the lookup resolves to one subscription. */
export interface AccountStatusSingle {
  account_ref_id: string;
  is_active: boolean;
  customer_email: string;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC. */
  updated_at: string;
  subscription_tier: SubscriptionTier;
}

/** One subscription of an account, as listed in the multiple form. */
export interface AccountSubscription {
  is_active: boolean;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC. */
  updated_at: string;
  subscription_tier: SubscriptionTier;
}

/** Account status when the account has several subscriptions and no filter narrowed it to one. */
export interface AccountStatusMultiple {
  account_ref_id: string;
  customer_email: string;
  subscriptions: AccountSubscription[];
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
