import { sleep } from '../sleep.js';
import { isPlainObject } from '../validation.js';
import type { MockWebhookPayload } from './payload.js';

/** How a webhook is retried; every field has a default so tests set only what they vary. */
export interface MockWebhookRetry {
  /** Tries in total, the first included; default 5. */
  attempts?: number | undefined;
  /** Wait before the first retry, doubled before each further one; default 50 ms. */
  delayMs?: number | undefined;
  /** How long one try may take (answer and body) before it counts as failed; default 5000 ms. */
  timeoutMs?: number | undefined;
}

/** {@link MockWebhookRetry} with the defaults applied. */
export type RetryPolicy = Required<MockWebhookRetry>;

/** One POST of a webhook and how the receiver answered it. */
export interface WebhookAttempt {
  /** HTTP status of the answer; absent when none came (connection refused, reset, timeout). */
  status?: number | undefined;
  /** Why the try counts as failed; absent on success. */
  error?: string | undefined;
  /** True only for a 200 whose JSON body has `received: true`, the reference's receiver contract. */
  ok: boolean;
}

/** One webhook and every try to deliver it. */
export interface WebhookDelivery {
  /** The webhook body that was (or would have been) posted. */
  event: MockWebhookPayload;
  /** Where it was posted; `''` when no receiver was registered (nothing was posted). */
  url: string;
  /** True when a try succeeded; false after the last try failed or when nothing was posted. */
  delivered: boolean;
  /** Oldest first; empty when nothing was posted. */
  attempts: WebhookAttempt[];
}

/** The receiver contract: the body must be a JSON object whose `received` is `true`. */
function acknowledges(text: string): boolean {
  try {
    const body: unknown = JSON.parse(text);
    return isPlainObject(body) && body.received === true;
  } catch {
    return false;
  }
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (!(error instanceof Error)) return String(error);
  // undici hides the useful part ("ECONNREFUSED", "other side closed") in the cause.
  const cause = error.cause;
  const detail =
    cause instanceof Error
      ? ((cause as Error & { code?: string | undefined }).code ?? cause.message)
      : undefined;
  return detail ? `${error.message} (${detail})` : error.message;
}

/**
 * One signal for a try: aborted by the mock (`cancel`) or when `timeoutMs` runs out. Built by hand
 * rather than with `AbortSignal.any`, which Node 20 lacks before 20.3.
 */
function trySignal(cancel: AbortSignal, timeoutMs: number): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const onCancel = (): void => controller.abort(cancel.reason);
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  if (cancel.aborted) onCancel();
  else cancel.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      cancel.removeEventListener('abort', onCancel);
    },
  };
}

async function attempt(
  url: string,
  body: string,
  timeoutMs: number,
  cancel: AbortSignal,
): Promise<WebhookAttempt> {
  const { signal, done } = trySignal(cancel, timeoutMs);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal,
    });
    const status = response.status;
    const text = await response.text();
    if (status !== 200) return { status, ok: false, error: `expected status 200, got ${status}` };
    if (!acknowledges(text)) return { status, ok: false, error: 'expected the JSON body {"received": true}' };
    return { status, ok: true };
  } catch (error) {
    return { ok: false, error: describeFailure(error, timeoutMs) };
  } finally {
    done();
  }
}

/**
 * Posts one payload until the receiver acknowledges it or the tries run out, always with the very
 * same body (same transaction_id), as a processor retrying a delivery does. Aborting `cancel`
 * (a mock reset or close) stops at once; the try it interrupted is not counted as the receiver's.
 */
export async function deliverWebhook(
  url: string,
  payload: MockWebhookPayload,
  policy: RetryPolicy,
  cancel: AbortSignal,
): Promise<WebhookDelivery> {
  const body = JSON.stringify(payload);
  const attempts: WebhookAttempt[] = [];
  for (let index = 0; index < policy.attempts; index++) {
    if (index > 0 && !(await sleep(policy.delayMs * 2 ** (index - 1), cancel))) break;
    const result = await attempt(url, body, policy.timeoutMs, cancel);
    if (cancel.aborted) break;
    attempts.push(result);
    if (result.ok) return { event: payload, url, delivered: true, attempts };
  }
  return { event: payload, url, delivered: false, attempts };
}
