import { WebhookError } from '../core/errors.js';
import type { WebhookEvent } from '../schemas/webhook.js';
import { type DedupeStore, memoryDedupeStore } from './dedupe.js';
import { parseWebhook } from './parse.js';

/** Options of the webhook handlers. */
export interface WebhookHandlerOptions {
  /**
   * Called once per new event; the sender gets 200 only after it resolves. Delivery is at least once:
   * when the dedupe store fails to record a processed id, the sender's retry calls it again.
   */
  onEvent: (event: WebhookEvent) => unknown | Promise<unknown>;
  /** Where processed ids are kept. Default: {@link memoryDedupeStore}. */
  dedupe?: DedupeStore | undefined;
  /** Largest body accepted, in bytes; larger → 413. Default 65 536. */
  maxBodyBytes?: number | undefined;
  /**
   * Told about a failing `onEvent` or dedupe store (the sender only sees a 500 without details).
   * Not awaited: a throw or a rejection here is ignored and the answer stays 500.
   */
  onError?: ((error: unknown, event: WebhookEvent) => void) | undefined;
}

/** A status and JSON body, before any framework turns it into a response. */
export interface WebhookReply {
  status: number;
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
 * The receiver contract, framework-free: parse, skip duplicates, run `onEvent`, and only then mark
 * the id seen, so a failed `onEvent` (500) leaves the sender's retry a chance. Concurrent deliveries
 * of one id share one `onEvent` run. The returned promise never rejects: every failure is a reply.
 *
 * Delivery is at least once. When `dedupe.add` fails after `onEvent` succeeded, the answer is 500:
 * the id was not recorded, so the sender retries and `onEvent` runs again for the same event. A 500
 * shows the broken store to the sender and its monitoring rather than hiding it behind a 200; the
 * price is that `onEvent` must tolerate a second run. An atomic claim of the id before `onEvent`
 * would close that window, but needs a richer store contract than `has` and `add`.
 */
export function webhookProcessor(
  options: WebhookHandlerOptions,
): (body: string | object) => Promise<WebhookReply> {
  const dedupe = options.dedupe ?? memoryDedupeStore();
  const inFlight = new Map<string, Promise<WebhookReply>>();
  const fail = (error: unknown, event: WebhookEvent, message: string): WebhookReply => {
    report(options.onError, error, event);
    return { status: 500, body: { error: message } };
  };
  const run = async (event: WebhookEvent): Promise<WebhookReply> => {
    const id = event.transaction_id;
    try {
      if (await dedupe.has(id)) return received;
    } catch (error) {
      return fail(error, event, 'dedupe store failed');
    }
    try {
      await options.onEvent(event);
    } catch (error) {
      return fail(error, event, 'event handler failed');
    }
    try {
      await dedupe.add(id);
    } catch (error) {
      return fail(error, event, 'dedupe store failed');
    }
    return received;
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
 * Calls the user's `onError` without letting it change the answer: a sync throw is caught, and a
 * returned promise is not awaited (a slow logger must not hold the sender) but its rejection is
 * handled, so it cannot become an unhandled rejection that ends the process.
 */
function report(onError: WebhookHandlerOptions['onError'], error: unknown, event: WebhookEvent): void {
  try {
    const result: unknown = onError?.(error, event);
    if (isThenable(result)) result.then(undefined, () => {});
  } catch {
    // The answer is already 500; a broken error reporter has nowhere else to report to.
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * A delivery as both adapters answer it: POST only (405), the body read up to `maxBodyBytes` (400
 * when reading fails, 413 over the limit), then processed. The returned function never rejects:
 * whatever escapes becomes a 500, so no adapter can leave a request unanswered.
 */
export function deliveryAnswerer(
  options: WebhookHandlerOptions,
): (
  method: string | undefined,
  read: (limit: number) => Promise<string | object | undefined>,
) => Promise<WebhookReply> {
  const process = webhookProcessor(options);
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
