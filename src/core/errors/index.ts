/**
 * The SDK's error hierarchy. Every error thrown by billing-sdk is a {@link BillingError}; each class
 * carries a literal `name`, so `switch (err.name)` narrows after {@link isBillingError}.
 *
 * No error ever holds a request header, so an API key cannot leak through `String(err)`,
 * `JSON.stringify(err)` or a logger; causes that quote it are scrubbed before they are attached.
 *
 * @example
 * ```ts
 * try {
 *   await billing.invoices.list({ account_ref_id: 'acct_1' });
 * } catch (err) {
 *   if (!isBillingError(err)) throw err;
 *   switch (err.name) {
 *     case 'RateLimitError': console.log('retry in', err.retryAfterMs); break;
 *     case 'NotFoundError': console.log(err.error); break;
 *     default: throw err;
 *   }
 * }
 * ```
 * One module per kind: base.ts (the base class and its brand), api.ts (error statuses),
 * connection.ts (no usable answer), credits.ts (a settle refused, credits that could not be held), features.ts (the SDK's checks and features), names.ts and
 * table.ts (the names and the table of classes they stand for). This index exports the public part
 * of them, nothing else: src/index.ts re-exports it whole.
 *
 * @module
 */
export {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from './api.js';
export { BillingError, type RequestContext } from './base.js';
export {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  type AttemptStats,
  ResponseTooLargeError,
} from './connection.js';
export {
  type CreditsShortfall,
  InsufficientCreditsError,
  type SettleRefusal,
  SettleRefusedError,
} from './credits.js';
export {
  HostedLinkError,
  type HostedLinkErrorCode,
  InvalidRequestError,
  type InvalidRequestIssue,
  PaginationError,
  ResponseValidationError,
  SpoolError,
  type SpoolErrorCode,
  StoreError,
  type StoreErrorCode,
  UsageTrackerError,
  type UsageTrackerErrorCode,
  type ValidationIssue,
  WebhookError,
} from './features.js';
export type { APIErrorName, BillingErrorName } from './names.js';
export { type AnyBillingError, type BillingErrorClasses, isBillingError } from './table.js';
export { AccountViewError } from './view.js';
