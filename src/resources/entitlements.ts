import { check, required, text } from '../core/checks.js';
import type { RequestOptions } from '../core/options.js';
import type { ApiCore } from '../core/request.js';
import { type EntitlementCheck, EntitlementCheckSchema } from '../schemas/entitlement.js';

/** Parameters of {@link Entitlements.check}. */
export interface EntitlementCheckParams {
  account_ref_id: string;
  product_code: string;
  entitlement_code: string;
}

const rules = {
  account_ref_id: [required, text],
  product_code: [required, text],
  entitlement_code: [required, text],
};

/** `billing.entitlements`: feature gates. */
export class Entitlements {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

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
  check(params: EntitlementCheckParams, options?: RequestOptions): Promise<EntitlementCheck> {
    return this.#core.call(options, () => ({
      operation: 'entitlements.check',
      method: 'GET',
      path: 'entitlements/check/',
      query: check('entitlements.check', params, rules),
      schema: EntitlementCheckSchema,
    }));
  }
}
