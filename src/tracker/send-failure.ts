import {
  APIConnectionError,
  AuthenticationError,
  BillingError,
  PermissionDeniedError,
  RateLimitError,
} from '../core/errors/index.js';
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

/**
 * Whether a failed send says something about the whole service rather than about its event: a 429
 * (the service, or the client's cooldown, asked for a pause) or no answer at all (a connection
 * refused or reset, a timeout). The whole tracker then pauses, and such a failure never counts
 * against the event's attempts: it is not the event's fault. Any other retryable failure (a 5xx,
 * 401, 403, 409) may be the event's own; several different events failing in a row make it the
 * service's too (see `Delivery`).
 */
export function concernsService(error: unknown): boolean {
  return error instanceof RateLimitError || error instanceof APIConnectionError;
}
