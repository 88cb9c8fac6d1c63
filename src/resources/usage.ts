import type { APIPromise } from '../core/api-promise.js';
import { BillingError, InvalidRequestError } from '../core/errors/index.js';
import type { RequestOptions } from '../core/options.js';
import {
  check,
  func,
  integer,
  isoDate,
  isPlainObject,
  jsonObject,
  type ParamRules,
  required,
  text,
} from '../internal/checks.js';
import type { BuiltRequest } from '../internal/endpoint.js';
import { endpoint } from '../internal/endpoint.js';
import { requestRules } from '../internal/options.js';
import { APIResource } from '../internal/resource.js';
import type { Schema } from '../internal/schema.js';
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
import { runMany } from '../util/bulk.js';
import { randomUUID } from '../util/uuid.js';

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

/** Options of {@link Usage.recordMany}: the usual request options (applied to each event), and how to run the batch. */
export interface RecordManyOptions extends RequestOptions {
  /** Events sent at once. Default 8. */
  concurrency?: number | undefined;
  /** Told after each event settles, e.g. to draw a progress bar. A callback that throws is ignored. */
  onProgress?: ((progress: { done: number; total: number }) => void) | undefined;
}

/** How one event of {@link Usage.recordMany} ended, with the key it was (or is to be) recorded under. */
export type RecordManyResult =
  | {
      /** The service answered: `result` says whether the event was accepted. */
      ok: true;
      /** The key the event was sent under. */
      event_key: string;
      /** The service's answer, as `usage.record` returns it. */
      result: UsageEventResult;
    }
  | {
      /** The event failed for good (after its retries), or was never sent (bad input, an abort). */
      ok: false;
      /** The key to resubmit it with: the service applies it at most once. */
      event_key: string;
      /** Why it failed. */
      error: BillingError;
    };

/** Parameters of {@link Usage.summary}. */
export interface UsageSummaryParams extends MeterParams {
  /** Inclusive start: a `Date` or an ISO 8601 string such as `2026-01-01T00:00:00Z`. */
  start?: Date | string | undefined;
  /** Inclusive end: a `Date` or an ISO 8601 string. */
  end?: Date | string | undefined;
}

/** The rules of the three parameters that name a balance (account, product, meter). @internal */
export const meterRules: ParamRules<MeterParams> = {
  account_ref_id: [required, text],
  product_code: [required, text],
  meter_code: [required, text],
};

/**
 * The rules of a debit or usage event's parameters: one home for `usage.record`, `usage.debit` and
 * the usage tracker's `track`, so they cannot disagree on what a valid event is.
 *
 * @internal
 */
export const usageWriteRules: ParamRules<UsageWriteParams> = {
  ...meterRules,
  quantity: [required, integer(1)],
  event_key: [text],
  metadata: [jsonObject],
};

/** A 4xx body carrying the refusal flag is a result (the reference does not say which status carries it). */
const refusal =
  (flag: 'approved' | 'accepted') =>
  (status: number, body: unknown): boolean =>
    status >= 400 && status < 500 && isPlainObject(body) && typeof body[flag] === 'boolean';

/**
 * Debit and record differ only in name, path, schema and refusal flag. The key is fixed once per
 * call, before the first attempt, so every retry sends the same one; it is returned on the result.
 */
/** A usage write's request: its key is always set (the caller's, or one made for the call). */
interface KeyedRequest extends BuiltRequest {
  eventKey: string;
}

function usageWrite<R extends object>(
  operation: string,
  path: string,
  schema: Schema<R>,
  flag: 'approved' | 'accepted',
) {
  return endpoint<UsageWriteParams, R, R & { event_key: string }, KeyedRequest>({
    operation,
    method: 'POST',
    rules: usageWriteRules,
    build: (params) => {
      const event_key = params.event_key ?? randomUUID();
      return { path, body: { ...params, event_key }, eventKey: event_key };
    },
    schema,
    idempotent: true,
    isResult: refusal(flag),
    transform: (result, request) => ({ ...result, event_key: request.eventKey }),
  });
}

const balance = endpoint<MeterParams, CreditBalance>({
  operation: 'usage.balance',
  method: 'GET',
  rules: meterRules,
  build: (query) => ({ path: 'usage/credits/balance/', query }),
  schema: CreditBalanceSchema,
});
const debit = usageWrite('usage.debit', 'usage/credits/debit/', DebitResponseSchema, 'approved');
const record = usageWrite('usage.record', 'usage/events/', UsageEventResponseSchema, 'accepted');
const summary = endpoint<UsageSummaryParams, UsageSummary>({
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

  /**
   * Records many usage events, `concurrency` at a time, and resolves with one result per event in
   * input order: its `event_key` and its result, or the typed error it failed with (after its own
   * retries). Every event gets its key before anything is sent, so a batch that was aborted, or
   * whose process died, is resumed exactly once by sending the same events with the same keys
   * again: events already recorded answer `idempotent: true` and are not counted twice. Give each
   * event your own `event_key` (a job or line id) when the batch must survive a crash of your process.
   *
   * Aborting (`signal`) settles the events not yet sent with `APIUserAbortError`; the promise itself
   * rejects only for invalid options, or an `event_key` given but not a non-empty string (naming
   * `events[i].event_key`): nothing of such a batch is sent.
   *
   * @example
   * ```ts
   * const results = await billing.usage.recordMany(events, {
   *   concurrency: 16,
   *   onProgress: ({ done, total }) => process.stdout.write(`\r${done}/${total}`),
   * });
   * const retryLater = results.filter((r) => !r.ok).map((r) => r.event_key);
   * ```
   */
  async recordMany(
    events: readonly UsageWriteParams[],
    options: RecordManyOptions = {},
  ): Promise<RecordManyResult[]> {
    if (!Array.isArray(events)) {
      throw new InvalidRequestError('usage.recordMany', [{ field: 'events', message: 'must be an array' }]);
    }
    const {
      concurrency = 8,
      onProgress,
      ...requestOptions
    } = check(
      'usage.recordMany',
      options,
      { ...requestRules, concurrency: [integer(1)], onProgress: [func] },
      undefined,
      'options.',
    ) as RecordManyOptions;
    // A key given but unusable (a number, '') is refused for the whole batch: swapping it for a
    // fresh one would record the same event again when the batch is sent a second time.
    const issues = events.flatMap((event, i) => {
      const given: unknown = isPlainObject(event) ? event.event_key : undefined;
      const problem = given === undefined ? undefined : text(given);
      return typeof problem === 'string' ? [{ field: `events[${i}].event_key`, message: problem }] : [];
    });
    if (issues.length > 0) throw new InvalidRequestError('usage.recordMany', issues);
    // Keys first: the caller learns every key from the results, sent or not.
    const keyed = events.map((event) => {
      // Whatever else the caller passed: a bad event is refused by record's checks, with its key.
      const given: unknown = isPlainObject(event) ? event.event_key : undefined;
      return { ...event, event_key: typeof given === 'string' ? given : randomUUID() };
    });
    const settled = await runMany(
      keyed,
      async (event): Promise<RecordManyResult> => {
        try {
          return { ok: true, event_key: event.event_key, result: await this.record(event, requestOptions) };
        } catch (error) {
          // The request path rejects with BillingErrors only; the guard keeps the type honest.
          const failure =
            error instanceof BillingError ? error : new BillingError(String(error), { cause: error });
          return { ok: false, event_key: event.event_key, error: failure };
        }
      },
      concurrency,
      onProgress && ((done) => onProgress({ done, total: keyed.length })),
    );
    // Each run above settles with its result: runMany's own failure branch never happens.
    return settled.flatMap((outcome) => (outcome.ok ? [outcome.value] : []));
  }

  /** Total usage of a meter, optionally between `start` and `end` (both inclusive). */
  summary(params: UsageSummaryParams, options?: RequestOptions): APIPromise<UsageSummary> {
    return this._call(summary, params, options);
  }
}
