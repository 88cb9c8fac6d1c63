import type { APIPromise } from '../core/api-promise.js';
import { integer, isoDate, jsonObject, required, text } from '../core/checks.js';
import type { RequestOptions } from '../core/options.js';
import { APIResource, endpoint } from '../core/resource.js';
import type { Schema } from '../core/schema.js';
import { randomUUID } from '../core/uuid.js';
import {
  type CreditBalance,
  CreditBalanceSchema,
  DebitResponseSchema,
  type DebitResult,
  UsageEventResponseSchema,
  type UsageEventResult,
  type UsageSummary,
  UsageSummarySchema,
} from '../schemas/usage.js';

/** Identifies a meter of an account. */
export interface MeterParams {
  /** Your identifier of the account. */
  account_ref_id: string;
  /** The product's stable code, e.g. `ai-assistant`. */
  product_code: string;
  /** A meter of that product, e.g. `credits`. */
  meter_code: string;
}

/** Parameters of {@link Usage.debit} and {@link Usage.record}. */
export interface UsageWriteParams extends MeterParams {
  /** How much was used or is to be debited: a positive integer count of the meter's units. */
  quantity: number;
  /**
   * Idempotency key, unique per debit attempt or event. Omit it and the SDK generates one, sends it on
   * every retry of the call, and returns it on the result and on any error (`err.event_key`): keep
   * it to retry the call yourself later without risking a double charge.
   */
  event_key?: string | undefined;
  /** Your own tracking data: a plain JSON object. */
  metadata?: Record<string, unknown> | undefined;
}

/** Parameters of {@link Usage.summary}. */
export interface UsageSummaryParams extends MeterParams {
  /** Inclusive start: a `Date` or an ISO 8601 string such as `2026-01-01T00:00:00Z`. */
  start?: Date | string | undefined;
  /** Inclusive end: a `Date` or an ISO 8601 string. */
  end?: Date | string | undefined;
}

const meterRules = {
  account_ref_id: [required, text],
  product_code: [required, text],
  meter_code: [required, text],
};

/** A 4xx body carrying the refusal flag is a result (the reference does not say which status carries it). */
const refusal =
  (flag: 'approved' | 'accepted') =>
  (status: number, body: unknown): boolean =>
    status >= 400 &&
    status < 500 &&
    typeof (body as Record<string, unknown> | undefined)?.[flag] === 'boolean';

/**
 * Debit and record differ only in name, path, schema and refusal flag. The key is fixed once per
 * call, before the first attempt, so every retry sends the same one; it is returned on the result.
 */
function usageWrite<R extends object>(
  operation: string,
  path: string,
  schema: Schema<R>,
  flag: 'approved' | 'accepted',
) {
  return endpoint<R, R & { event_key: string }>({
    operation,
    method: 'POST',
    rules: { ...meterRules, quantity: [required, integer(1)], event_key: [text], metadata: [jsonObject] },
    build: (params) => {
      const event_key = (params.event_key as string | undefined) ?? randomUUID();
      return { path, body: { ...params, event_key }, eventKey: event_key };
    },
    schema,
    idempotent: true,
    isResult: refusal(flag),
    transform: (result, request) => ({ ...result, event_key: request.eventKey as string }),
  });
}

const balance = endpoint<CreditBalance>({
  operation: 'usage.balance',
  method: 'GET',
  rules: meterRules,
  build: (query) => ({ path: 'usage/credits/balance/', query }),
  schema: CreditBalanceSchema,
});
const debit = usageWrite('usage.debit', 'usage/credits/debit/', DebitResponseSchema, 'approved');
const record = usageWrite('usage.record', 'usage/events/', UsageEventResponseSchema, 'accepted');
const summary = endpoint<UsageSummary>({
  operation: 'usage.summary',
  method: 'GET',
  rules: { ...meterRules, start: [isoDate], end: [isoDate] },
  build: (query) => ({ path: 'usage/summary/', query }),
  schema: UsageSummarySchema,
});

/** `billing.usage`: prepaid credits and metered usage. */
export class Usage extends APIResource {
  /** Remaining prepaid credits of a meter (0 when the account has none). */
  balance(params: MeterParams, options?: RequestOptions): APIPromise<CreditBalance> {
    return this._call(balance, params, options);
  }

  /**
   * Authorises and debits prepaid credits before an action. Retried like a GET with the same
   * `event_key`, so a lost response never debits twice. A refusal is a result, not an exception.
   * When the call fails for good, `err.event_key` is the key to retry it with later.
   *
   * @example
   * ```ts
   * const debit = await billing.usage.debit({
   *   account_ref_id: 'acct_1', product_code: 'ai-assistant', meter_code: 'credits', quantity: 5,
   * });
   * if (!debit.approved) return reply(402, debit.error_code); // 'insufficient_credits' | 'invalid_usage_model'
   * ```
   */
  debit(params: UsageWriteParams, options?: RequestOptions): APIPromise<DebitResult> {
    return this._call(debit, params, options);
  }

  /**
   * Records usage after an action. Idempotent by `event_key` (a replay answers `idempotent: true` and
   * records nothing), and retried like a GET. A refusal is a result, not an exception. When the call
   * fails for good, `err.event_key` is the key to retry it with later.
   *
   * @example
   * ```ts
   * const event = await billing.usage.record({
   *   account_ref_id: 'acct_1', product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1,
   * });
   * ```
   */
  record(params: UsageWriteParams, options?: RequestOptions): APIPromise<UsageEventResult> {
    return this._call(record, params, options);
  }

  /** Total usage of a meter, optionally between `start` and `end` (both inclusive). */
  summary(params: UsageSummaryParams, options?: RequestOptions): APIPromise<UsageSummary> {
    return this._call(summary, params, options);
  }
}
