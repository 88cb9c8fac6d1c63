import pRetry from 'p-retry';
import { APIConnectionError, APIError, APIUserAbortError, type RequestContext } from './errors.js';
import type { SdkLogger } from './logger.js';
import { parseRetryAfter } from './retry-after.js';

/** How one call retries. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Longest Retry-After waited out; a longer one ends the call with the error at once. */
  maxRetryDelay: number;
  /** GETs, and POSTs made idempotent by an `event_key`: safe to send twice. */
  idempotent: boolean;
  signal: AbortSignal | undefined;
  request: RequestContext;
  logger: SdkLogger;
}

const retryableStatus = (status: number) =>
  status === 408 || status === 409 || status === 429 || status >= 500;
/** Errors that prove the request never reached a server, so even a non-idempotent POST may be resent. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether `error` may be retried under `policy` (the attempt budget is p-retry's to count). */
export function isRetryable(error: unknown, idempotent: boolean): boolean {
  if (error instanceof APIUserAbortError) return false;
  if (error instanceof APIConnectionError) return idempotent || neverSent(error);
  if (error instanceof APIError) return idempotent && retryableStatus(error.status);
  return false;
}

function neverSent(error: APIConnectionError): boolean {
  let cause: unknown = error.cause;
  for (let depth = 0; cause && depth < 4; depth++) {
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

/** The server's Retry-After when it sent one, else backoff. */
function delayFor(error: unknown, retryNumber: number): number {
  const asked = error instanceof APIError ? parseRetryAfter(error.headers) : undefined;
  return asked ?? backoffDelay(retryNumber);
}

/**
 * Runs `run` until it succeeds, fails for good, or the budget is spent. The first attempt runs
 * directly: most calls succeed at once and should not pay for a retry loop. After a retryable
 * failure p-retry runs the rest, counting attempts and stopping on the signal; the wait itself is
 * ours, because p-retry has no per-attempt delay and the server's Retry-After must win over backoff.
 */
export async function withRetries<T>(run: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const { signal, request } = policy;
  try {
    try {
      return await run();
    } catch (first) {
      await waitBeforeRetry(first, 1, policy);
    }
    return await pRetry(run, {
      retries: policy.maxRetries - 1,
      minTimeout: 0,
      factor: 1,
      ...(signal ? { signal } : {}),
      shouldRetry: async ({ error, attemptNumber }) => {
        await waitBeforeRetry(error, attemptNumber + 1, policy);
        return true;
      },
    });
  } catch (error) {
    if (signal?.aborted && !(error instanceof APIUserAbortError)) {
      throw new APIUserAbortError(request, { cause: error });
    }
    throw error;
  }
}

/**
 * Waits before retry number `retryNumber`, or rethrows `error` when it may not be retried: not
 * retryable, no retry left, or a Retry-After longer than the caller allows (the caller then decides,
 * with `RateLimitError.retryAfterMs`).
 */
async function waitBeforeRetry(error: unknown, retryNumber: number, policy: RetryPolicy): Promise<void> {
  const { request, logger } = policy;
  if (retryNumber > policy.maxRetries || !isRetryable(error, policy.idempotent)) throw error;
  const delay = delayFor(error, retryNumber);
  if (delay > policy.maxRetryDelay) throw error;
  if (logger.enabled('info')) {
    const { name, message } = error as Error;
    logger.log(
      'info',
      `retrying ${request.method} ${request.path} in ${delay} ms (retry ${retryNumber} of ${policy.maxRetries}) after ${name}: ${message}`,
    );
  }
  await sleep(delay, policy.signal, request);
}

function sleep(ms: number, signal: AbortSignal | undefined, request: RequestContext): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError(request, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
