import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';
import type { OpenEnum } from './common.js';

/** A catalog product. */
export interface Product {
  /** Unique manager id (`product_manage_id` elsewhere). */
  manage_id: string;
  /** Used for SaaS and subscription lookups (`product_name`, `subscription_name`). */
  label_name: string;
  type: OpenEnum<'single' | 'subscription'>;
  /** Decimal price of a single product; absent in some responses. */
  price?: string;
}

/** Validates a {@link Product}; unknown fields are kept. */
export const ProductSchema: Schema<Product> = z.looseObject({
  manage_id: z.string(),
  label_name: z.string(),
  type: z.string(),
  price: z.optional(z.string()),
});
