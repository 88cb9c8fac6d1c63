import type { AccessCache } from '../access/cache.js';
import { WebhookError } from '../core/errors/index.js';
import type { CreditHolds } from '../credits/types.js';
import { check, func, nonNegative, type Rule, required } from '../internal/checks.js';
import { durationMs, MAX_DURATION_MS } from '../internal/duration.js';
import type { WebhookEvent } from '../schemas/webhook.js';
import { safely } from '../util/safely.js';
import { DEFAULT_CLAIM_TTL_MS, runClaimed } from './claim-run.js';
import type { DedupeStore, WebhookEventContext } from './dedupe.js';
import { memoryDedupeStore } from './memory-dedupe.js';
import { parseWebhook } from './parse.js';

/** Options of the webhook handlers. */
export interface WebhookHandlerOptions {
  /**
   * Called once per new event, only while this receiver holds the event's claim; the sender gets
   * 200 only after it resolves. It can run a second time only when its claim expired meanwhile (see
   * `claimTtlMs`), or when the store failed to record it done (then the retry runs it after the TTL).
   *
   * Its second argument is always an object. With a store that runs events in transactions
   * (`postgresDedupeStore` from `billing-sdk/postgres`) it holds `transaction`: write the event's
   * effects through it and they commit with the event's done mark, or not at all, so they happen
   * exactly once even when a receiver dies mid-event. With other stores it is `{}`.
   */
  onEvent: (event: WebhookEvent, context: WebhookEventContext) => unknown | Promise<unknown>;
  /**
   * Where deliveries are claimed and processed ids kept. Default: {@link memoryDedupeStore}, per
   * process; several instances share one store (`redisDedupeStore` from `billing-sdk/redis`).
   */
  dedupe?: DedupeStore | undefined;
  /**
   * How long a claim lasts without renewal, in ms. The handler renews it every third of this while
   * `onEvent` runs, so it bounds how long a crashed or stalled receiver blocks the event's retries
   * (they are answered 409 until then), not how long `onEvent` may take. Default 60 000; at most a year
   * (31 536 000 000), like every `…Ms` option of the SDK.
   */
  claimTtlMs?: number | undefined;
  /**
   * An access cache (`createAccessCache`) whose answers about the event's account are dropped
   * before `onEvent` runs and before the sender gets its 200, here and on every instance sharing its
   * store. The payload's own fields (`is_active`) never become an answer: deliveries are not
   * authenticated, so a forged one can at most cause one extra lookup.
   */
  access?: Pick<AccessCache, 'invalidate'> | undefined;
  /**
   * Credit holds (`createCreditHolds`) whose balances of the event's account are marked stale
   * before `onEvent` runs and before the sender gets its 200, on every instance sharing its store:
   * the next reservation reads the balance again, so a top-up is seen at once.
   */
  holds?: Pick<CreditHolds, 'invalidate'> | undefined;
  /** Largest body accepted, in bytes; larger → 413. Default 65 536. */
  maxBodyBytes?: number | undefined;
  /**
   * Told about a failing `onEvent` or dedupe store (the sender only sees a 500 without details), and
   * about a claim that could not be renewed or was lost while `onEvent` ran (the answer is unchanged).
   * Not awaited: a throw or a rejection here is ignored and the answer stays as it was.
   */
  onError?: ((error: unknown, event: WebhookEvent) => void) | undefined;
}

/** Has every listed method: a duck-typed check of an object option. */
const methods =
  (what: string, names: readonly string[]): Rule =>
  (v) =>
    names.every((m) => typeof (v as Record<string, unknown>)[m] === 'function')
      ? undefined
      : `must be ${what} (with ${names.join(', ')} methods)`;

/** Every option of the handlers, checked when a handler is made. */
const handlerRules: Record<keyof WebhookHandlerOptions, Rule[]> = {
  onEvent: [required, func],
  dedupe: [
    methods('a dedupe store', ['claim', 'renew', 'complete', 'release']),
    (v) =>
      ['undefined', 'function'].includes(typeof (v as DedupeStore).runInTransaction)
        ? undefined
        : 'must have runInTransaction as a function, or not at all',
  ],
  claimTtlMs: [
    (v) =>
      durationMs(v) === undefined && (v as number) >= 1
        ? undefined
        : `must be a number of ms >= 1 and <= ${MAX_DURATION_MS} (a year)`,
  ],
  access: [
    (v) =>
      typeof (v as { invalidate?: unknown }).invalidate === 'function'
        ? undefined
        : 'must be an access cache (with an invalidate method)',
  ],
  holds: [
    (v) =>
      typeof (v as { invalidate?: unknown }).invalidate === 'function'
        ? undefined
        : 'must be credit holds (with an invalidate method)',
  ],
  maxBodyBytes: [nonNegative],
  onError: [func],
};

/** A status, headers and JSON body, before any framework turns it into a response. */
export interface WebhookReply {
  status: number;
  /** Headers besides `content-type` (always `application/json`), e.g. `retry-after`. */
  headers?: Record<string, string> | undefined;
  body: Record<string, unknown>;
}

/** Default largest body: lifecycle events are a few hundred bytes. */
export const DEFAULT_MAX_WEBHOOK_BYTES = 65_536;

const received: WebhookReply = { status: 200, body: { received: true } };

/**
 * The answer when anything fails after the body parsed, and the handlers' last resort. The body
 * names no cause: error messages may hold details the sender has no business seeing.
 */
export const INTERNAL_ERROR_REPLY: WebhookReply = { status: 500, body: { error: 'internal error' } };

/**
 * The receiver contract, framework-free: parse, claim the id in the dedupe store, run `onEvent`
 * under the claim, and only then mark the id done, so a failed `onEvent` (500) releases the id for
 * the sender's retry. A delivery whose id another receiver is processing gets 409 with Retry-After,
 * never a 200 before the event was processed. Concurrent deliveries of one id in this process
 * share one run. The returned promise never rejects: every failure is a reply.
 *
 * Fails closed: when the store cannot claim, no `onEvent` (500, the sender retries). When it cannot
 * record a processed id done, the answer is 500 and the claim lapses after its TTL, after which a
 * retry runs `onEvent` again: that, and a claim that expired while `onEvent` ran, are the only ways
 * an event runs twice.
 */
export function webhookProcessor(
  options: WebhookHandlerOptions,
  operation = 'createWebhookHandler',
): (body: string | object) => Promise<WebhookReply> {
  check(operation, options, handlerRules, undefined, 'options.');
  const dedupe = options.dedupe ?? memoryDedupeStore();
  const ttlMs = options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS;
  // By then the holder has finished, or its claim has lapsed and the retry can take it over.
  const busy: WebhookReply = {
    status: 409,
    headers: { 'retry-after': String(Math.ceil(ttlMs / 1000)) },
    body: { error: 'delivery is being processed by another receiver; retry later', retryable: true },
  };
  // What the event's account may have changed: answers and balances kept from before it go first.
  const stale = [
    ...(options.access ? [{ what: 'access cache', drop: options.access }] : []),
    ...(options.holds ? [{ what: 'credit holds', drop: options.holds }] : []),
  ];
  const inFlight = new Map<string, Promise<WebhookReply>>();
  const run = async (event: WebhookEvent): Promise<WebhookReply> => {
    for (const { what, drop } of stale) {
      try {
        await drop.invalidate(event.account_ref_id);
      } catch (error) {
        // An answer or a balance from before this event could still be used: let the sender retry.
        report(options.onError, error, event);
        return { status: 500, body: { error: `${what} invalidation failed` } };
      }
    }
    const outcome = await runClaimed(event, {
      dedupe,
      ttlMs,
      onEvent: options.onEvent,
      report: (error) => report(options.onError, error, event),
    });
    switch (outcome.kind) {
      case 'done':
      case 'processed':
        return received;
      case 'processing':
        return busy;
      case 'failed':
        report(options.onError, outcome.error, event);
        return {
          status: 500,
          body: { error: outcome.stage === 'store' ? 'dedupe store failed' : 'event handler failed' },
        };
    }
  };
  return async (body) => {
    let event: WebhookEvent;
    try {
      event = parseWebhook(body);
    } catch (error) {
      return { status: 400, body: { error: error instanceof WebhookError ? error.message : 'invalid body' } };
    }
    const id = event.transaction_id;
    const pending = inFlight.get(id);
    if (pending) return pending;
    // `run` catches every failure itself; the catch is a last resort so no caller ever sees a rejection.
    const reply = run(event)
      .catch(() => INTERNAL_ERROR_REPLY)
      .finally(() => inFlight.delete(id));
    inFlight.set(id, reply);
    return reply;
  };
}

/**
 * Calls the user's `onError` without letting it change the answer: not awaited (a slow logger must
 * not hold the sender), and neither its throw nor its rejection escapes.
 */
function report(onError: WebhookHandlerOptions['onError'], error: unknown, event: WebhookEvent): void {
  void safely(() => onError?.(error, event));
}

/**
 * A delivery as both adapters answer it: POST only (405), the body read up to `maxBodyBytes` (400
 * when reading fails, 413 over the limit), then processed. The options are checked here, once,
 * when the handler is made: a bad one throws {@link InvalidRequestError} naming it (under
 * `operation`, the adapter's name). The returned function never rejects: whatever escapes becomes a
 * 500, so no adapter can leave a request unanswered.
 */
export function deliveryAnswerer(
  options: WebhookHandlerOptions,
  operation = 'createWebhookHandler',
): (
  method: string | undefined,
  read: (limit: number) => Promise<string | object | undefined>,
) => Promise<WebhookReply> {
  const process = webhookProcessor(options, operation);
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_WEBHOOK_BYTES;
  const answer = async (
    method: string | undefined,
    read: (limit: number) => Promise<string | object | undefined>,
  ): Promise<WebhookReply> => {
    if (method !== 'POST') return { status: 405, body: { error: 'method not allowed' } };
    let body: string | object | undefined;
    try {
      body = await read(limit);
    } catch {
      // The sender hung up mid-body or the runtime's stream failed: there is no event to process.
      return { status: 400, body: { error: 'could not read body' } };
    }
    if (body === undefined) return { status: 413, body: { error: `body larger than ${limit} bytes` } };
    return process(body);
  };
  return (method, read) => answer(method, read).catch(() => INTERNAL_ERROR_REPLY);
}
