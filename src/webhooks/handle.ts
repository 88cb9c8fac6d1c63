import { WebhookError } from '../core/errors.js';
import type { WebhookEvent } from '../schemas/webhook.js';
import { type DedupeStore, memoryDedupeStore } from './dedupe.js';
import { parseWebhook } from './parse.js';

/** Options of the webhook handlers. */
export interface WebhookHandlerOptions {
  /** Called once per new event; the sender gets 200 only after it resolves. */
  onEvent: (event: WebhookEvent) => unknown | Promise<unknown>;
  /** Where processed ids are kept. Default: {@link memoryDedupeStore}. */
  dedupe?: DedupeStore;
  /** Largest body accepted, in bytes; larger → 413. Default 65 536. */
  maxBodyBytes?: number;
  /** Told about a failing `onEvent` (the sender only sees a 500 without details). */
  onError?: (error: unknown, event: WebhookEvent) => void;
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
 * The receiver contract, framework-free: parse, skip duplicates, run `onEvent`, and only then mark
 * the id seen, so a failed `onEvent` (500) leaves the sender's retry a chance. Concurrent deliveries
 * of one id share one `onEvent` run.
 */
export function webhookProcessor(
  options: WebhookHandlerOptions,
): (body: string | object) => Promise<WebhookReply> {
  const dedupe = options.dedupe ?? memoryDedupeStore();
  const inFlight = new Map<string, Promise<WebhookReply>>();
  const run = async (event: WebhookEvent): Promise<WebhookReply> => {
    if (await dedupe.has(event.transaction_id)) return received;
    try {
      await options.onEvent(event);
    } catch (error) {
      options.onError?.(error, event);
      return { status: 500, body: { error: 'event handler failed' } };
    }
    await dedupe.add(event.transaction_id);
    return received;
  };
  return async (body) => {
    let event: WebhookEvent;
    try {
      event = parseWebhook(body);
    } catch (error) {
      if (error instanceof WebhookError) return { status: 400, body: { error: error.message } };
      throw error;
    }
    const id = event.transaction_id;
    const pending = inFlight.get(id);
    if (pending) return pending;
    const reply = run(event).finally(() => inFlight.delete(id));
    inFlight.set(id, reply);
    return reply;
  };
}
