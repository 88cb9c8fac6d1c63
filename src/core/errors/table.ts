/**
 * The one table of error classes, {@link BillingErrorClasses} (each name of names.ts and the class
 * it stands for), and what is built on it: the union {@link AnyBillingError} and
 * {@link isBillingError}, which narrows to a class by its name.
 *
 * @module
 */
import type {
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
import { type BillingError, inChain } from './base.js';
import type {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  ResponseTooLargeError,
} from './connection.js';
import type { InsufficientCreditsError, SettleRefusedError } from './credits.js';
import type {
  HostedLinkError,
  InvalidRequestError,
  PaginationError,
  ResponseValidationError,
  SpoolError,
  StoreError,
  UsageTrackerError,
  WebhookError,
} from './features.js';
import type { BillingErrorName } from './names.js';
import type { AccountViewError } from './view.js';

/** Each error name and the class it stands for (a name also matches its subclasses, as `instanceof` does). */
export interface BillingErrorClasses {
  /** `isBillingError(err, 'BillingError')` narrows `err` to {@link BillingError}. */
  BillingError: BillingError;
  /** `isBillingError(err, 'APIError')` narrows `err` to {@link APIError}. */
  APIError: APIError;
  /** `isBillingError(err, 'BadRequestError')` narrows `err` to {@link BadRequestError}. */
  BadRequestError: BadRequestError;
  /** `isBillingError(err, 'AuthenticationError')` narrows `err` to {@link AuthenticationError}. */
  AuthenticationError: AuthenticationError;
  /** `isBillingError(err, 'PermissionDeniedError')` narrows `err` to {@link PermissionDeniedError}. */
  PermissionDeniedError: PermissionDeniedError;
  /** `isBillingError(err, 'NotFoundError')` narrows `err` to {@link NotFoundError}. */
  NotFoundError: NotFoundError;
  /** `isBillingError(err, 'ConflictError')` narrows `err` to {@link ConflictError}. */
  ConflictError: ConflictError;
  /** `isBillingError(err, 'UnprocessableEntityError')` narrows `err` to {@link UnprocessableEntityError}. */
  UnprocessableEntityError: UnprocessableEntityError;
  /** `isBillingError(err, 'RateLimitError')` narrows `err` to {@link RateLimitError}. */
  RateLimitError: RateLimitError;
  /** `isBillingError(err, 'InternalServerError')` narrows `err` to {@link InternalServerError}. */
  InternalServerError: InternalServerError;
  /** `isBillingError(err, 'APIConnectionError')` narrows `err` to {@link APIConnectionError}. */
  APIConnectionError: APIConnectionError;
  /** `isBillingError(err, 'APITimeoutError')` narrows `err` to {@link APITimeoutError}. */
  APITimeoutError: APITimeoutError;
  /** `isBillingError(err, 'APIUserAbortError')` narrows `err` to {@link APIUserAbortError}. */
  APIUserAbortError: APIUserAbortError;
  /** `isBillingError(err, 'ResponseTooLargeError')` narrows `err` to {@link ResponseTooLargeError}. */
  ResponseTooLargeError: ResponseTooLargeError;
  /** `isBillingError(err, 'InvalidRequestError')` narrows `err` to {@link InvalidRequestError}. */
  InvalidRequestError: InvalidRequestError;
  /** `isBillingError(err, 'ResponseValidationError')` narrows `err` to {@link ResponseValidationError}. */
  ResponseValidationError: ResponseValidationError;
  /** `isBillingError(err, 'PaginationError')` narrows `err` to {@link PaginationError}. */
  PaginationError: PaginationError;
  /** `isBillingError(err, 'HostedLinkError')` narrows `err` to {@link HostedLinkError}. */
  HostedLinkError: HostedLinkError;
  /** `isBillingError(err, 'WebhookError')` narrows `err` to {@link WebhookError}. */
  WebhookError: WebhookError;
  /** `isBillingError(err, 'SpoolError')` narrows `err` to {@link SpoolError}. */
  SpoolError: SpoolError;
  /** `isBillingError(err, 'StoreError')` narrows `err` to {@link StoreError}. */
  StoreError: StoreError;
  /** `isBillingError(err, 'SettleRefusedError')` narrows `err` to {@link SettleRefusedError}. */
  SettleRefusedError: SettleRefusedError;
  /** `isBillingError(err, 'InsufficientCreditsError')` narrows `err` to {@link InsufficientCreditsError}. */
  InsufficientCreditsError: InsufficientCreditsError;
  /** `isBillingError(err, 'UsageTrackerError')` narrows `err` to {@link UsageTrackerError}. */
  UsageTrackerError: UsageTrackerError;
  /** `isBillingError(err, 'AccountViewError')` narrows `err` to {@link AccountViewError}. */
  AccountViewError: AccountViewError;
}

/**
 * Every error the SDK throws, as a union on `name`: after {@link isBillingError}, `switch (err.name)`
 * narrows to the class (`case 'RateLimitError': err.retryAfterMs`).
 */
export type AnyBillingError = {
  [N in BillingErrorName]: BillingErrorClasses[N] & {
    /** The literal name that selects this member of the union. */
    readonly name: N;
  };
}[BillingErrorName];

/**
 * Whether `err` is an error of billing-sdk (of any copy of the package), optionally of the class
 * named `name` or a subclass of it. Narrows `err` for `switch (err.name)`.
 *
 * @example
 * ```ts
 * if (isBillingError(err, 'RateLimitError')) await sleep(err.retryAfterMs ?? 1000);
 * ```
 */
export function isBillingError(err: unknown): err is AnyBillingError;
export function isBillingError<N extends BillingErrorName>(
  err: unknown,
  name: N,
): err is BillingErrorClasses[N];
export function isBillingError(err: unknown, name: BillingErrorName = 'BillingError'): boolean {
  return inChain(err, undefined, name);
}
