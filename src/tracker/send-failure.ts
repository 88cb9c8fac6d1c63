import { AuthenticationError, BillingError, PermissionDeniedError } from '../core/errors/index.js';
import { retryDecision } from '../internal/retry.js';

/**
 * Whether a failed send of a usage event is worth sending again later (with the same key), rather
 * than a refusal of the event itself that no retry can change (a dead letter).
 *
 * Transient: what the client itself retries (connection failures, timeouts, 408, 409, 429, 5xx),
 * and also:
 * - 401 and 403: they say the API key is wrong or lacks a right, not that the event is; dead-lettering
 *   every event until someone fixes the key would throw the usage away;
 * - an error that is not the SDK's (a bug, a broken `fetch`): nothing says the event is at fault.
 *
 * Everything else (400, 404 for an unknown account, 422, a body that does not match its schema) is
 * the service refusing this event, and sending it again would be refused again.
 */
export function isWorthResending(error: unknown): boolean {
  if (!(error instanceof BillingError)) return true;
  if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) return true;
  // The event is sent with its key, so it is as safe to resend as a GET (idempotent).
  return retryDecision(error, 1, { maxRetries: 1, maxRetryDelay: Number.POSITIVE_INFINITY, idempotent: true })
    .retry;
}
