/**
 * The error of prepaid-credit holds: {@link SettleRefusedError}, a settle the service refused.
 *
 * @module
 */
import { BillingError } from './base.js';
import type { BillingErrorName } from './names.js';

/** What a {@link SettleRefusedError} says of the settle the service refused. */
export interface SettleRefusal {
  /** The account whose hold was settled. */
  account_ref_id: string;
  /** The product. */
  product_code: string;
  /** The meter. */
  meter_code: string;
  /** The quantity the action used: the work done and not paid for. */
  used: number;
  /** The debit's key: a later `usage.debit` under it (once the customer paid) is charged once. */
  event_key: string;
  /** The service's reason, e.g. `insufficient_credits`. */
  error_code: string;
  /** The balance as the service answered it with the refusal. */
  remaining_balance: number;
}

/**
 * A hold's settle the service refused (its credits were spent elsewhere meanwhile, or the hold
 * expired first): the work was done and not paid for. Never thrown by `hold.settle()`, which answers
 * the refusal as its result; told to the holds' `onError` and the gate's `onError`, so the app can
 * collect the amount or cut the customer off.
 */
export class SettleRefusedError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'SettleRefusedError';
  /** Always `'SettleRefusedError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'SettleRefusedError' as const;
  /** The account whose hold was settled. */
  readonly account_ref_id: string;
  /** The product. */
  readonly product_code: string;
  /** The meter. */
  readonly meter_code: string;
  /** The quantity the action used and that was not debited. */
  readonly used: number;
  /** The debit's key: a later `usage.debit` under it is charged once. */
  declare readonly event_key: string;
  /** The service's reason, e.g. `insufficient_credits`. */
  readonly error_code: string;
  /** The balance as the service answered it with the refusal. */
  readonly remaining_balance: number;

  /**
   * Built by the holds when a settle's debit is refused.
   *
   * @param refusal - What was settled and what the service answered.
   */
  constructor(refusal: SettleRefusal) {
    super(
      `hold.settle: the service refused the debit of ${refusal.used} (${refusal.error_code}, remaining balance ${refusal.remaining_balance}): the work is unpaid`,
    );
    this.account_ref_id = refusal.account_ref_id;
    this.product_code = refusal.product_code;
    this.meter_code = refusal.meter_code;
    this.used = refusal.used;
    Object.defineProperty(this, 'event_key', { value: refusal.event_key, enumerable: true });
    this.error_code = refusal.error_code;
    this.remaining_balance = refusal.remaining_balance;
  }
}
