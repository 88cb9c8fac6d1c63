import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';

/** Whether an account has a product entitlement, as `entitlements.check` returns it. */
export interface EntitlementCheck {
  /** The account asked about, echoed from the request. */
  account_ref_id: string;
  /** The product's stable code, echoed from the request. */
  product_code: string;
  /** The entitlement asked about, echoed from the request. */
  entitlement_code: string;
  /** Whether the account has the entitlement (scoped to the gateway that owns the API key). */
  has_access: boolean;
}

/** Validates an {@link EntitlementCheck}; unknown fields are kept. */
export const EntitlementCheckSchema: Schema<EntitlementCheck> = z.looseObject({
  account_ref_id: z.string(),
  product_code: z.string(),
  entitlement_code: z.string(),
  has_access: z.boolean(),
});
