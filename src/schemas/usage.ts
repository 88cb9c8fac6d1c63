import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import type { OpenEnum } from './common.js';

/** Remaining prepaid credits of a meter (0 when there is no balance record). */
export interface CreditBalance {
  /** The account asked about, echoed from the request. */
  account_ref_id: string;
  /** The product's stable code, echoed from the request. */
  product_code: string;
  /** The meter, echoed from the request. */
  meter_code: string;
  /**
   * Remaining credits: an integer count of the meter's units (credits, API calls…), not money. 0 when
   * no balance record exists.
   */
  balance: number;
}

/** Why a debit or usage event was refused. */
export type UsageErrorCode = OpenEnum<'insufficient_credits' | 'invalid_usage_model'>;

/** A debit that went through. */
export interface DebitApproved {
  /** Always `true` here: switch on it to tell an approval from a {@link DebitRefused}. */
  approved: true;
  /** Credits taken by this debit, an integer count of the meter's units. */
  debited: number;
  /** Credits left after the debit, an integer count of the meter's units. */
  remaining_balance: number;
  /** The idempotency key sent (generated when the call gave none). */
  event_key: string;
}

/** A debit that was refused: nothing was debited. */
export interface DebitRefused {
  /** Always `false` here: switch on it to tell a refusal from a {@link DebitApproved}. */
  approved: false;
  /**
   * Why: `insufficient_credits` (the balance is too low) or `invalid_usage_model` (the product does
   * not use prepaid credits, or the meter is configured wrongly). An open enum.
   */
  error_code: UsageErrorCode;
  /**
   * The balance as it stands, unchanged by the refusal; an integer. The reference shows 0 for an
   * `invalid_usage_model` refusal.
   */
  remaining_balance: number;
  /** The idempotency key sent (generated when the call gave none). */
  event_key: string;
}

/** Result of `usage.debit`: switch on `approved`. Refusals are results, not exceptions. */
export type DebitResult = DebitApproved | DebitRefused;

/** A usage event that was recorded (`idempotent: true` when this `event_key` was already recorded). */
export interface UsageEventAccepted {
  /** Always `true` here: switch on it to tell an acceptance from a {@link UsageEventRefused}. */
  accepted: true;
  /** The quantity recorded for this `event_key`, an integer count of the meter's units. */
  recorded_quantity: number;
  /** True when the event was a replay of an `event_key` already recorded: nothing new was recorded. */
  idempotent: boolean;
  /** The idempotency key sent (generated when the call gave none). */
  event_key: string;
}

/** A usage event that was refused. */
export interface UsageEventRefused {
  /** Always `false` here: switch on it to tell a refusal from a {@link UsageEventAccepted}. */
  accepted: false;
  /**
   * Why: `invalid_usage_model` (the product does not use a postpaid usage model, or the meter is
   * configured wrongly) is the one the reference shows. An open enum.
   */
  error_code: UsageErrorCode;
  /** The idempotency key sent (generated when the call gave none). */
  event_key: string;
}

/** Result of `usage.record`: switch on `accepted`. Refusals are results, not exceptions. */
export type UsageEventResult = UsageEventAccepted | UsageEventRefused;

/** Total usage of a meter over a period. */
export interface UsageSummary {
  /** The account asked about, echoed from the request. */
  account_ref_id: string;
  /** The product's stable code, echoed from the request. */
  product_code: string;
  /** The meter, echoed from the request. */
  meter_code: string;
  /** Total usage recorded in the range, an integer count of the meter's units; 0 when no events exist. */
  total_usage: number;
}

/** Validates a {@link CreditBalance}. */
export const CreditBalanceSchema: Schema<CreditBalance> = z.looseObject({
  account_ref_id: z.string(),
  product_code: z.string(),
  meter_code: z.string(),
  balance: z.int(),
});

/** Validates a debit response (before the SDK adds `event_key`). */
export const DebitResponseSchema: Schema<Omit<DebitApproved, 'event_key'> | Omit<DebitRefused, 'event_key'>> =
  z.discriminatedUnion('approved', [
    z.looseObject({ approved: z.literal(true), debited: z.int(), remaining_balance: z.int() }),
    z.looseObject({ approved: z.literal(false), error_code: z.string(), remaining_balance: z.int() }),
  ]);

/** Validates a usage event response (before the SDK adds `event_key`). */
export const UsageEventResponseSchema: Schema<
  Omit<UsageEventAccepted, 'event_key'> | Omit<UsageEventRefused, 'event_key'>
> = z.discriminatedUnion('accepted', [
  z.looseObject({ accepted: z.literal(true), recorded_quantity: z.int(), idempotent: z.boolean() }),
  z.looseObject({ accepted: z.literal(false), error_code: z.string() }),
]);

/** Validates a {@link UsageSummary}. */
export const UsageSummarySchema: Schema<UsageSummary> = z.looseObject({
  account_ref_id: z.string(),
  product_code: z.string(),
  meter_code: z.string(),
  total_usage: z.int(),
});
