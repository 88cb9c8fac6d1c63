import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import type { OpenEnum } from './common.js';

/** A tier of a subscription product, as `tiers.list` and the account status return it. */
export interface SubscriptionTier {
  /** The tier's label, used in lookups (`tier`, `tier_name`). */
  label_name: string;
  /** Display name for customers. */
  name: string;
  /** Free-text description of the tier, as configured in the catalog. */
  description: string;
  /**
   * Price as a decimal string (the reference types it `string (decimal)`), such as `"29.00"`. Keep
   * it as a string or use a decimal library; do not `parseFloat` money. The tier carries no
   * currency field, and the reference states neither the currency, nor whether the price is per
   * `billing_cycle`, nor the number of decimal places.
   */
  price: string;
  /**
   * How often the tier bills: only `monthly` occurs; the reference does not show the other allowed values.
   */
  billing_cycle: OpenEnum<'monthly'>;
  /** The tier's features as one comma-separated string; {@link tierFeatures} splits it. */
  features: string;
  /** Whether the tier is marked as popular in the catalog; the reference says nothing more about it. */
  is_popular: boolean;
  /** `manage_id` of the subscription product the tier belongs to. */
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
