import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import type { OpenEnum } from './common.js';

/** A catalog product, as `products.list` returns it. */
export interface Product {
  /** Unique manager id of the product; other resources refer to it as `product_manage_id`. */
  manage_id: string;
  /** Label used for SaaS and subscription lookups (`product_name`, `subscription_name`, `tiers.list`). */
  label_name: string;
  /** `single` (a one-time sale) or `subscription`; an open enum, so another value still parses. */
  type: OpenEnum<'single' | 'subscription'>;
  /**
   * Price as a decimal string, such as `"19.00"`; keep it as a string or use a decimal library, do
   * not `parseFloat` money. The reference: "single products only; present only in one documented
   * variant of the list response". So it may be absent even for a single product: `undefined`
   * means "not sent", not "free". The product carries no currency field and the reference does not
   * state the currency.
   */
  price?: string | undefined;
}

/** Validates a {@link Product}; unknown fields are kept. */
export const ProductSchema: Schema<Product> = z.looseObject({
  manage_id: z.string(),
  label_name: z.string(),
  type: z.string(),
  price: z.optional(z.string()),
});
