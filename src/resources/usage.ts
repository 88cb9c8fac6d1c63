import { check, dateLike, integer, plainObject, required, text } from '../core/checks.js';
import type { RequestOptions } from '../core/options.js';
import type { ApiCore } from '../core/request.js';
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
  account_ref_id: string;
  /** The product's stable code, e.g. `ai-assistant`. */
  product_code: string;
  /** A meter of that product, e.g. `credits`. */
  meter_code: string;
}

/** Parameters of {@link Usage.debit} and {@link Usage.record}. */
export interface UsageWriteParams extends MeterParams {
  /** A positive integer. */
  quantity: number;
  /**
   * Idempotency key, unique per debit attempt or event. Omit it and the SDK generates one, sends it on
   * every retry of the call, and returns it on the result: keep it to retry the call yourself later.
   */
  event_key?: string;
  /** Your own tracking data. */
  metadata?: Record<string, unknown>;
}

/** Parameters of {@link Usage.summary}. */
export interface UsageSummaryParams extends MeterParams {
  /** Inclusive start: a `Date` or an ISO 8601 string. */
  start?: Date | string;
  /** Inclusive end: a `Date` or an ISO 8601 string. */
  end?: Date | string;
}

const meterRules = {
  account_ref_id: [required, text],
  product_code: [required, text],
  meter_code: [required, text],
};
const writeRules = {
  ...meterRules,
  quantity: [required, integer(1)],
  event_key: [text],
  metadata: [plainObject],
};
const summaryRules = { ...meterRules, start: [dateLike], end: [dateLike] };
const refusal =
  (flag: 'approved' | 'accepted') =>
  (status: number, body: unknown): boolean =>
    status >= 400 &&
    status < 500 &&
    typeof (body as Record<string, unknown> | undefined)?.[flag] === 'boolean';

/** `billing.usage`: prepaid credits and metered usage. */
export class Usage {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

  /** Remaining prepaid credits of a meter (0 when the account has none). */
  balance(params: MeterParams, options?: RequestOptions): Promise<CreditBalance> {
    return this.#core.call(options, () => ({
      operation: 'usage.balance',
      method: 'GET',
      path: 'usage/credits/balance/',
      query: check('usage.balance', params, meterRules),
      schema: CreditBalanceSchema,
    }));
  }

  /**
   * Authorises and debits prepaid credits before an action. Retried like a GET with the same
   * `event_key`, so a lost response never debits twice. A refusal is a result, not an exception.
   *
   * @example
   * ```ts
   * const debit = await billing.usage.debit({
   *   account_ref_id: 'acct_1', product_code: 'ai-assistant', meter_code: 'credits', quantity: 5,
   * });
   * if (!debit.approved) return reply(402, debit.error_code); // 'insufficient_credits' | 'invalid_usage_model'
   * ```
   */
  debit(params: UsageWriteParams, options?: RequestOptions): Promise<DebitResult> {
    return this.#write(
      'usage.debit',
      'usage/credits/debit/',
      DebitResponseSchema,
      'approved',
      params,
      options,
    );
  }

  /**
   * Records usage after an action. Idempotent by `event_key` (a replay answers `idempotent: true` and
   * records nothing), and retried like a GET. A refusal is a result, not an exception.
   *
   * @example
   * ```ts
   * const event = await billing.usage.record({
   *   account_ref_id: 'acct_1', product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1,
   * });
   * ```
   */
  record(params: UsageWriteParams, options?: RequestOptions): Promise<UsageEventResult> {
    return this.#write(
      'usage.record',
      'usage/events/',
      UsageEventResponseSchema,
      'accepted',
      params,
      options,
    );
  }

  /** Total usage of a meter, optionally between `start` and `end` (both inclusive). */
  summary(params: UsageSummaryParams, options?: RequestOptions): Promise<UsageSummary> {
    return this.#core.call(options, () => ({
      operation: 'usage.summary',
      method: 'GET',
      path: 'usage/summary/',
      query: check('usage.summary', params, summaryRules),
      schema: UsageSummarySchema,
    }));
  }

  /** Debit and record differ only in endpoint, schema and the flag that marks a refusal. */
  async #write<R, F extends 'approved' | 'accepted'>(
    operation: string,
    path: string,
    schema: Schema<R>,
    flag: F,
    params: UsageWriteParams,
    options: RequestOptions | undefined,
  ): Promise<R & { event_key: string }> {
    // The key is fixed once per call, before the first attempt, so every retry sends the same one.
    let event_key = '';
    const result = await this.#core.call(options, () => {
      const body = check(operation, params, writeRules);
      event_key = body.event_key ?? randomUUID();
      return {
        operation,
        method: 'POST',
        path,
        body: { ...body, event_key },
        schema,
        idempotent: true,
        isResult: refusal(flag),
      };
    });
    return { ...result, event_key };
  }
}
