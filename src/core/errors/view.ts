/**
 * The error of the browser view (`billing-sdk/view`): {@link AccountViewError}. Apart from the
 * other errors so that the view, which a browser downloads, carries only this one.
 *
 * @module
 */
import { BillingError } from './base.js';
import type { BillingErrorName } from './names.js';

/**
 * Why the browser's account view could not read the state: `status` is the endpoint's HTTP status
 * (401: no session; 429: too many streams; 503: billing unreachable), absent when no answer came
 * (the network, a closed view) or when the options were bad (`reason` says which).
 */
export class AccountViewError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'AccountViewError';
  /** Always `'AccountViewError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'AccountViewError' as const;
  /** The endpoint's HTTP status, when it answered. */
  readonly status: number | undefined;
  /**
   * `'http'`, `'network'`, `'closed'`, `'invalid_options'`, or `'invalid_answer'` (the endpoint, or
   * something between, answered what is not a state: a proxy's page, a malformed event).
   */
  readonly reason: 'http' | 'network' | 'closed' | 'invalid_options' | 'invalid_answer';

  /**
   * Built by the view.
   *
   * @param reason - What went wrong.
   * @param message - Says it to a person.
   * @param status - The endpoint's HTTP status, when it answered.
   */
  constructor(reason: AccountViewError['reason'], message: string, status?: number) {
    super(`createAccountView: ${message}`);
    this.reason = reason;
    this.status = status;
  }
}
