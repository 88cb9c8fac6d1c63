import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';
import type { OpenEnum } from './common.js';

/** A tier of a subscription product. */
export interface SubscriptionTier {
  /** Tier label, used in lookups (`tier`, `tier_name`). */
  label_name: string;
  /** Display name. */
  name: string;
  description: string;
  /** Decimal price as a string, e.g. `"29.00"`. */
  price: string;
  /** Only `monthly` occurs today. */
  billing_cycle: OpenEnum<'monthly'>;
  /** Comma-separated features in one string; see {@link tierFeatures}. */
  features: string;
  is_popular: boolean;
  /** Manage id of the owning product. */
  product_manage_id: string;
}

/** Validates a {@link SubscriptionTier}; unknown fields are kept. */
export const SubscriptionTierSchema: Schema<SubscriptionTier> = z.looseObject({
  label_name: z.string(),
  name: z.string(),
  description: z.string(),
  price: z.string(),
  billing_cycle: z.string(),
  features: z.string(),
  is_popular: z.boolean(),
  product_manage_id: z.string(),
});

/**
 * A tier's features as an array: the API sends them as one comma-separated string.
 *
 * @example tierFeatures(tier) // ['API access', 'Priority support']
 */
export function tierFeatures(tier: Pick<SubscriptionTier, 'features'>): string[] {
  return tier.features
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
}
