import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';

/** Whether an account has a product entitlement. */
export interface EntitlementCheck {
  account_ref_id: string;
  product_code: string;
  entitlement_code: string;
  has_access: boolean;
}

/** Validates an {@link EntitlementCheck}; unknown fields are kept. */
export const EntitlementCheckSchema: Schema<EntitlementCheck> = z.looseObject({
  account_ref_id: z.string(),
  product_code: z.string(),
  entitlement_code: z.string(),
  has_access: z.boolean(),
});
