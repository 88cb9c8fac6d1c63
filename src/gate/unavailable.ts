import { APIConnectionError, APIError, RateLimitError } from '../core/errors/index.js';

/** How long a 503 asks the client to wait when the service named no time of its own, in seconds. */
export const DEFAULT_RETRY_AFTER_S = 5;

/** The service could not answer (down, slow, 5xx, 429): a "maybe", never a "no" nor a "yes". */
export function isUnavailable(error: unknown): boolean {
  return (
    error instanceof APIConnectionError ||
    (error instanceof APIError && (error.status === 429 || error.status >= 500))
  );
}

/** The wait a 429 named, in whole seconds; `undefined` for other failures. */
export function retryAfterOf(error: unknown): number | undefined {
  if (!(error instanceof RateLimitError) || error.retryAfterMs === undefined) return undefined;
  return Math.max(1, Math.ceil(error.retryAfterMs / 1000));
}
