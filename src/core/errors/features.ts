/**
 * The errors of the SDK's own checks and features: bad input, an unexpected body, pagination,
 * hosted links, webhooks, spools, shared stores and the usage tracker. Those with several causes
 * carry a `code` saying which.
 *
 * @module
 */
import { BillingError, describeRequest, type RequestContext } from './base.js';
import type { BillingErrorName } from './names.js';

/** One problem with the parameters of a call, found before anything was sent. */
export interface InvalidRequestIssue {
  /** The parameter, e.g. `page_size`, or `options.timeout`. */
  field: string;
  /** What is wrong with it. */
  message: string;
}

/** The call's parameters or options break a rule; no request was sent. */
export class InvalidRequestError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'InvalidRequestError';
  /** Always `'InvalidRequestError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'InvalidRequestError' as const;
  /** The SDK method called. */
  readonly operation: string;
  /** Every problem found. */
  readonly issues: InvalidRequestIssue[];

  /**
   * Built by the SDK before sending, when parameters or options break a rule.
   *
   * @param operation - The SDK method called, e.g. `invoices.list`.
   * @param issues - Every problem found; the message lists them.
   */
  constructor(operation: string, issues: InvalidRequestIssue[]) {
    super(`${operation}: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`);
    this.operation = operation;
    this.issues = issues;
  }
}

/** One way a response differed from its schema. */
export interface ValidationIssue {
  /** Where in the body, e.g. `['results', 3, 'amount_due']`. */
  path: (string | number)[];
  /** What was wrong. */
  message: string;
  /** The validator's issue code, e.g. `invalid_type`. */
  code: string;
}

/** A response lacked a documented field or had one of the wrong type (`validation: 'strict'`). */
export class ResponseValidationError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'ResponseValidationError';
  /** Always `'ResponseValidationError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'ResponseValidationError' as const;
  /** SDK method, HTTP method and path. */
  readonly request: RequestContext;
  /** Every mismatch found. */
  readonly issues: ValidationIssue[];
  /** The body as received (parsed JSON, or text when it was not JSON). */
  readonly body: unknown;

  /**
   * Built by the SDK when a body does not match its schema under `validation: 'strict'`.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param issues - Every mismatch; the message shows the first five.
   * @param body - The body as received.
   */
  constructor(request: RequestContext, issues: ValidationIssue[], body: unknown) {
    const shown = issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
      .join('; ');
    super(`${describeRequest(request)} returned an unexpected body: ${shown}`);
    this.request = request;
    this.issues = issues;
    this.body = body;
  }
}

/** A paginated list repeated a page or did not end; iteration stopped instead of looping. */
export class PaginationError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'PaginationError';
  /** Always `'PaginationError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'PaginationError' as const;
}

/** Why a hosted-link token was rejected. */
export type HostedLinkErrorCode =
  | 'missing_token'
  | 'invalid_token'
  | 'invalid_signature'
  | 'unsupported_algorithm'
  | 'expired'
  | 'missing_claim';

/** A hosted-link token failed verification. */
export class HostedLinkError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'HostedLinkError';
  /** Always `'HostedLinkError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'HostedLinkError' as const;
  /** What failed. */
  readonly code: HostedLinkErrorCode;

  /**
   * Built by {@link verifyHostedLink} when a token fails.
   *
   * @param code - What failed.
   * @param message - Human-readable detail.
   * @param options - `cause`: the underlying error, when there is one.
   */
  constructor(code: HostedLinkErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A webhook body was not a valid event. */
export class WebhookError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'WebhookError';
  /** Always `'WebhookError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'WebhookError' as const;
  /** The validation issues, when the body was JSON of the wrong shape. */
  readonly issues: ValidationIssue[];

  /**
   * Built by the webhook parser when a body is not a valid event.
   *
   * @param message - What was wrong.
   * @param issues - The validation issues, when the body was JSON of the wrong shape.
   */
  constructor(message: string, issues: ValidationIssue[] = []) {
    super(message);
    this.issues = issues;
  }
}

/** Why a durable spool of a usage tracker failed. */
export type SpoolErrorCode =
  /** Another live process (or another spool in this one) holds the spool's lock. */
  | 'locked'
  /** A stored record could not be read back: the spool refuses to guess rather than lose or resend events. */
  | 'corrupt'
  /**
   * Writing or syncing failed. For an append, what was being appended may have reached the file
   * all the same (a sync that failed after the write): `track` then says so (`outcome`).
   */
  | 'io'
  /** The spool is not open (never opened, or closed). */
  | 'closed'
  /**
   * The spool's store (Redis, PostgreSQL) failed, could not be reached or did not answer in time.
   * For an append, whether it stored the events may be unknown (`track` then says so: `outcome`).
   */
  | 'unavailable'
  /** A replace found a member acknowledged or claimed elsewhere meanwhile: nothing was written. */
  | 'conflict'
  /**
   * The store lost what it held: a Redis stream or its consumer group vanished (`FLUSHALL`, a restart
   * without persistence, an eviction, a failover to an empty replica). Events appended before are no
   * longer in the spool: never counted as sent; the tracker reports them unsent.
   */
  | 'lost'
  /**
   * Redis stored the write, but fewer replicas than the spool's `waitReplicas` confirmed it within
   * `waitTimeoutMs`: a failover could lose it, so it is not claimed as stored (see `redisSpool`).
   */
  | 'not_replicated';

/**
 * A spool (`memorySpool`, `fileSpool` of `billing-sdk/node`, `redisSpool` of `billing-sdk/redis`,
 * `postgresSpool` of `billing-sdk/postgres`) could not be opened, was used when not open, or could
 * not store events.
 */
export class SpoolError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'SpoolError';
  /** Always `'SpoolError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'SpoolError' as const;
  /** What failed. */
  readonly code: SpoolErrorCode;
  /**
   * Set by `tracker.track` when the spool may have stored the event all the same (a reply that
   * came too late or was lost, a write whose sync failed): it may still be sent. Retry `track`
   * with this same `eventKey` (as the event's `event_key`): the service records a key once.
   */
  declare readonly outcome?: 'unknown' | undefined;
  /** With {@link outcome}: the `event_key` the event was (perhaps) stored under. */
  declare readonly eventKey?: string | undefined;

  /**
   * Built by a spool when it cannot do what was asked.
   *
   * @param code - What failed.
   * @param message - Human-readable detail (names the file).
   * @param options - `cause`: the underlying error, when there is one; `outcome` and `eventKey`:
   * the event may have been stored (see {@link SpoolError.outcome}).
   */
  constructor(
    code: SpoolErrorCode,
    message: string,
    options?: { cause?: unknown; outcome?: 'unknown' | undefined; eventKey?: string | undefined },
  ) {
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
    this.code = code;
    // Own properties only when set, so an error without them prints and serialises as before.
    if (options?.outcome) (this as { outcome?: 'unknown' }).outcome = options.outcome;
    if (options?.eventKey !== undefined) (this as { eventKey?: string }).eventKey = options.eventKey;
  }
}

/** Why a shared store failed. */
export type StoreErrorCode =
  /** The store (Redis, PostgreSQL) failed or did not answer in time: the step did not happen, or its outcome is unknown. */
  | 'unavailable'
  /** The store answered something the SDK did not expect (another program's key of the same name, a server too old). */
  | 'unexpected_reply'
  /**
   * The step ran, but fewer replicas than the store's `waitReplicas` confirmed it within
   * `waitTimeoutMs`: a failover could undo it (see `redisDedupeStore`).
   */
  | 'not_replicated';

/**
 * A shared store of `billing-sdk/redis` (`redisDedupeStore`, `redisCooldown`, `redisAccessStore`,
 * `redisHoldStore`) or of `billing-sdk/postgres` (`postgresDedupeStore`, `postgresHoldStore`) failed
 * or answered something unexpected.
 * What reaches `onError` callbacks and webhook handlers from those stores is this class (the
 * client's or driver's own error is its `cause`).
 */
export class StoreError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'StoreError';
  /** Always `'StoreError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'StoreError' as const;
  /** What failed. */
  readonly code: StoreErrorCode;

  /**
   * Built by a store when it cannot do what was asked.
   *
   * @param code - What failed.
   * @param message - Human-readable detail (names the step, never a key's value).
   * @param options - `cause`: the Redis client's or Postgres driver's error, when there is one.
   */
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Why a usage tracker refused an event: it is closed, or full with `onFull: 'reject'`. */
export type UsageTrackerErrorCode =
  /** `close()` was called: the tracker takes no more events. */
  | 'closed'
  /** `maxQueued` events are not acknowledged yet and the tracker was made with `onFull: 'reject'`. */
  | 'full';

/** A usage tracker refused to take an event (`createUsageTracker`): nothing was queued. */
export class UsageTrackerError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'UsageTrackerError';
  /** Always `'UsageTrackerError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'UsageTrackerError' as const;
  /** Why the event was refused. */
  readonly code: UsageTrackerErrorCode;

  /**
   * Built by the tracker when `track` cannot take an event.
   *
   * @param code - Why.
   * @param message - Human-readable detail.
   */
  constructor(code: UsageTrackerErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
