import { SettleRefusedError } from '../core/errors/index.js';
import type { DebitResult } from '../schemas/usage.js';
import type { CreditHold } from './types.js';

/**
 * The error a settle's refused debit is told as (to the holds' and the gate's `onError`), or
 * `undefined` when the debit was approved: one place that says what an unpaid settle carries.
 */
export function refusedSettle(
  hold: CreditHold,
  used: number,
  result: DebitResult,
): SettleRefusedError | undefined {
  if (result.approved) return undefined;
  return new SettleRefusedError({
    account_ref_id: hold.account_ref_id,
    product_code: hold.product_code,
    meter_code: hold.meter_code,
    used,
    event_key: hold.event_key,
    error_code: String(result.error_code),
    remaining_balance: result.remaining_balance,
  });
}
