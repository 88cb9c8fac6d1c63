/**
 * The names of the error classes, for `switch (err.name)` and `isBillingError(err, name)`. Each
 * class's literal `name` and its `brand` are typed by these unions, and {@link BillingErrorClasses}
 * maps each name to its class: the compiler refuses a class whose name is not listed here, and a
 * name without its entry in that table (test/core/error-names.test.ts ties the three together).
 *
 * A list apart from the classes, so that `BillingError` can type its `name` with it: derived from
 * the table, which names every subclass, it would make the base class depend on its subclasses.
 *
 * @module
 */

/** Names of the classes that stand for an HTTP error status: {@link APIError} and its subclasses. */
export type APIErrorName =
  | 'APIError'
  | 'BadRequestError'
  | 'AuthenticationError'
  | 'PermissionDeniedError'
  | 'NotFoundError'
  | 'ConflictError'
  | 'UnprocessableEntityError'
  | 'RateLimitError'
  | 'InternalServerError';

/**
 * Names of every error class, for `switch (err.name)`: the keys of {@link BillingErrorClasses}, the
 * table of each name's class (a class's own `name` and `brand` must match its key there).
 */
export type BillingErrorName =
  | 'BillingError'
  | APIErrorName
  | 'APIConnectionError'
  | 'APITimeoutError'
  | 'APIUserAbortError'
  | 'ResponseTooLargeError'
  | 'InvalidRequestError'
  | 'ResponseValidationError'
  | 'PaginationError'
  | 'HostedLinkError'
  | 'WebhookError'
  | 'SpoolError'
  | 'StoreError'
  | 'SettleRefusedError'
  | 'InsufficientCreditsError'
  | 'UsageTrackerError'
  | 'AccountViewError';
