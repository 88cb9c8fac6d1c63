import { APIConnectionError, APIError, APIUserAbortError } from '../core/errors/index.js';

/** How one call may retry. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Longest server-requested wait (Retry-After) honoured; a longer one ends the call with the error. */
  maxRetryDelay: number;
  /** GETs, and POSTs made idempotent by an `event_key`: safe to send twice. */
  idempotent: boolean;
  /** The wait before retry number `retry` when the server asked for none. Default {@link backoffDelay}. */
  retryDelay?: ((retry: number) => number) | undefined;
}

/** What to do after a failed attempt. */
export type RetryDecision = { retry: true; delayMs: number } | { retry: false; reason: string };

const retryableStatus = (status: number) =>
  status === 408 || status === 409 || status === 429 || status >= 500;

/** Errors that prove the request never reached a server, so even a non-idempotent POST may be resent. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The retry policy, as one pure function: after attempt number `attempt` (1-based) failed with
 * `error`, retry after how many ms, or give up. The server's Retry-After wins over backoff; a
 * Retry-After beyond `maxRetryDelay` gives up at once (the caller then sees `retryAfterMs`), while
 * the SDK's own backoff is never cut by `maxRetryDelay`.
 */
export function retryDecision(
  error: unknown,
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): RetryDecision {
  if (attempt > policy.maxRetries) return { retry: false, reason: 'no retries left' };
  if (!isRetryable(error, policy.idempotent)) return { retry: false, reason: 'not retryable' };
  const asked = error instanceof APIError ? error.retryAfterMs : undefined;
  if (asked === undefined) {
    return {
      retry: true,
      delayMs: policy.retryDelay ? policy.retryDelay(attempt) : backoffDelay(attempt, random),
    };
  }
  if (asked > policy.maxRetryDelay) return { retry: false, reason: 'Retry-After exceeds maxRetryDelay' };
  return { retry: true, delayMs: asked };
}

/** Whether `error` may be retried at all: a transient failure of a request that is safe to resend. */
function isRetryable(error: unknown, idempotent: boolean): boolean {
  if (error instanceof APIUserAbortError) return false;
  if (error instanceof APIConnectionError) return idempotent || neverSent(error);
  if (error instanceof APIError) return idempotent && retryableStatus(error.status);
  return false;
}

function neverSent(error: APIConnectionError): boolean {
  let cause: unknown = error.cause;
  for (let depth = 0; cause && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && notSentCodes.has(code)) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** Exponential backoff with jitter: about 0.5 s, 1 s, 2 s … capped at 8 s, each 75–100 % of that. */
export function backoffDelay(retryNumber: number, random: () => number = Math.random): number {
  const base = Math.min(8_000, 500 * 2 ** (retryNumber - 1));
  return Math.round(base * (0.75 + 0.25 * random()));
}
