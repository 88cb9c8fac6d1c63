/**
 * The errors of prepaid credits: {@link SettleRefusedError}, a settle the service refused, and
 * {@link InsufficientCreditsError}, an action refused before it ran because its credits could not be held.
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

/** What an {@link InsufficientCreditsError} says of the reservation that was refused. */
export interface CreditsShortfall {
  /** The account whose credits could not be held. */
  account_ref_id: string;
  /** The product. */
  product_code: string;
  /** The meter. */
  meter_code: string;
  /** The credits the action needed held: the most it may cost. */
  required: number;
  /** The credits that could be held (the balance minus every unexpired hold, or what a route's hold has left). */
  available: number;
}

/**
 * An action refused before it ran because the most it may cost could not be held: thrown by the
 * AI meter of `billing-sdk/ai` in `'hold'` mode (and under a gated route's hold) before the provider
 * is called, so nothing was sent to it and nothing was charged.
 */
export class InsufficientCreditsError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'InsufficientCreditsError';
  /** Always `'InsufficientCreditsError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'InsufficientCreditsError' as const;
  /** The account whose credits could not be held. */
  readonly account_ref_id: string;
  /** The product. */
  readonly product_code: string;
  /** The meter. */
  readonly meter_code: string;
  /** The credits the action needed held: the most it may cost. */
  readonly required: number;
  /** The credits that could be held. */
  readonly available: number;

  /**
   * Built when a reservation is refused.
   *
   * @param operation - What was refused, e.g. `openai.chat.completions.create`.
   * @param shortfall - The ledger, what was needed and what was available.
   */
  constructor(operation: string, shortfall: CreditsShortfall) {
    super(
      `${operation}: insufficient credits: ${shortfall.required} needed, ${shortfall.available} available (nothing was sent to the provider)`,
    );
    this.account_ref_id = shortfall.account_ref_id;
    this.product_code = shortfall.product_code;
    this.meter_code = shortfall.meter_code;
    this.required = shortfall.required;
    this.available = shortfall.available;
  }
}
