import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import { required, text } from '../internal/checks.js';
import { endpoint } from '../internal/endpoint.js';
import { APIResource } from '../internal/resource.js';
import { type EntitlementCheck, EntitlementCheckSchema } from '../schemas/entitlement.js';

/** Parameters of {@link Entitlements.check}. */
export interface EntitlementCheckParams {
  /** Your identifier of the account to check. */
  account_ref_id: string;
  /** The product's stable code, e.g. `ai-assistant`. */
  product_code: string;
  /** The entitlement to check, e.g. `export`. */
  entitlement_code: string;
}

/** `entitlements.check`; also the checks of the access cache's entitlement lookups. */
export const checkEntitlement = endpoint<EntitlementCheckParams, EntitlementCheck>({
  operation: 'entitlements.check',
  method: 'GET',
  rules: {
    account_ref_id: [required, text],
    product_code: [required, text],
    entitlement_code: [required, text],
  },
  build: (query) => ({ path: 'entitlements/check/', query }),
  schema: EntitlementCheckSchema,
});

/** `billing.entitlements`: feature gates. */
export class Entitlements extends APIResource {
  /**
   * Whether the account has the entitlement.
   *
   * @example
   * ```ts
   * const { has_access } = await billing.entitlements.check({
   *   account_ref_id: 'acct_1', product_code: 'ai-assistant', entitlement_code: 'export',
   * });
   * ```
   */
  check(params: EntitlementCheckParams, options?: RequestOptions): APIPromise<EntitlementCheck> {
    return this._call(checkEntitlement, params, options);
  }
}
