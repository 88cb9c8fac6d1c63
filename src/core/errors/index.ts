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
 * @module
 */
import { plainHeaders, requestIdOf } from '../util/redact.js';
import { parseRetryAfter } from '../util/retry-after.js';

/** Where a request went: the SDK method, the HTTP method and the URL path (never the query string, which may hold an e-mail). */
export interface RequestContext {
  /** SDK method, e.g. `invoices.list`. */
  operation: string;
  /** HTTP method. */
  method: string;
  /** URL path, e.g. `/api/invoices/`. */
  path: string;
}

/**
 * Each class carries its name in a static `brand` field, so `instanceof` also recognises errors
 * made by another copy of the package in the same process (its ESM and CJS builds, or two
 * versions): the copies share the field's name but not the classes. A plain string key, not a
 * symbol: bundlers keep every class that has a computed static key, tree-shaken or not.
 */
const BRAND = 'brand';

/**
 * Whether `value` has `cls` on its prototype chain, or (when `brand` is given) any class carrying
 * that brand: the latter is how another copy of the package is recognised.
 */
function inChain(value: unknown, cls: unknown, brand: string | undefined): boolean {
  if (value == null) return false;
  for (let proto = Object.getPrototypeOf(Object(value)); proto; proto = Object.getPrototypeOf(proto)) {
    const ctor = (proto as { constructor?: Record<string, unknown> | undefined }).constructor;
    if (ctor === cls || (brand && ctor && Object.hasOwn(ctor, BRAND) && ctor[BRAND] === brand)) return true;
  }
  return false;
}

/** Base class of every error the SDK throws. */
export class BillingError extends Error {
  /** @internal */
  static readonly brand: BillingErrorName = 'BillingError';
  /**
   * The class's name as a string literal (each subclass narrows it), so `switch (err.name)` works
   * after {@link isBillingError}, also across copies of the package.
   */
  override readonly name: BillingErrorName = 'BillingError';
  /**
   * The idempotency key of the debit or usage event whose call failed (set on every error of
   * `usage.debit` and `usage.record`): call again with the same `event_key` and the service
   * applies it at most once.
   */
  declare readonly event_key?: string | undefined;

  /** `instanceof` by brand: true for errors of this class made by any copy of the package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class on the right of `instanceof` (a subclass inherits this method), so it
    // cannot be spelled `BillingError` here.
    // biome-ignore lint/complexity/noThisInStatic: see above
    const cls = this as unknown as Record<string, string>;
    // A user's own subclass has no brand of its own: only the plain prototype check applies.
    return inChain(value, cls, Object.hasOwn(cls, BRAND) ? cls[BRAND] : undefined);
  }

  /**
   * A plain object for loggers and `JSON.stringify`: the fields, the message (which `Error` keeps
   * non-enumerable) and the cause as one line (causes are scrubbed of the key before they are attached).
   */
  toJSON(): Record<string, unknown> {
    const { cause } = this;
    // An undefined cause disappears in JSON.stringify.
    return {
      ...(this as object),
      name: this.name,
      message: this.message,
      cause: cause instanceof Error ? `${cause.name}: ${cause.message}` : cause,
    };
  }
}

function describe(ctx: RequestContext): string {
  return `${ctx.operation} (${ctx.method} ${ctx.path})`;
}

/** The server answered with an error status (or a redirect, which is never followed). Subclasses narrow it by status. */
export class APIError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APIError';
  /** `'APIError'`, or the name of the subclass for the status (e.g. `'NotFoundError'`). */
  override readonly name: APIErrorName = 'APIError';
  /** HTTP status code. */
  readonly status: number;
  /** Response headers, lower-cased, with cookies removed. */
  readonly headers: Record<string, string>;
  /** The response body: parsed JSON, or the raw text when it was not JSON, or `undefined` when empty. */
  readonly body: unknown;
  /** SDK method, HTTP method and path of the failed request. */
  readonly request: RequestContext;
  /** The server's id for this request (`x-request-id` or `request-id`), to quote when you report a problem. */
  readonly requestId: string | undefined;
  /** How long the server asked to wait before a retry (`Retry-After`, `retry-after-ms`), in ms; `undefined` when it did not say. */
  readonly retryAfterMs: number | undefined;

  /**
   * Built by the SDK from a response; public so tests can build one to stub a failure.
   *
   * @param status - The HTTP status.
   * @param headers - The response headers: a `Headers` is copied with names lower-cased and
   * credentials and cookies dropped; a plain object is kept as given.
   * @param body - The response body: parsed JSON, the raw text, or `undefined` when empty.
   * @param request - SDK method, HTTP method and path of the request.
   */
  constructor(
    status: number,
    headers: Headers | Record<string, string>,
    body: unknown,
    request: RequestContext,
  ) {
    const plain = plainHeaders(headers);
    super(`${describe(request)} ${summary(status, plain, body)}`);
    this.status = status;
    this.headers = plain;
    this.body = body;
    this.request = request;
    this.requestId = requestIdOf(plain);
    this.retryAfterMs = parseRetryAfter(plain);
  }
}

/** What went wrong, for the message: a redirect names where it pointed; an error its body's detail. */
function summary(status: number, headers: Record<string, string>, body: unknown): string {
  if (status >= 300 && status < 400) {
    return `answered ${status} redirecting to ${headers.location ?? '(no Location)'}, not followed (check baseUrl)`;
  }
  return `failed with ${status}${detailOf(body)}`;
}

/** The most useful one-line detail of an error body, for the message. */
function detailOf(body: unknown): string {
  if (typeof body === 'string') return body ? `: ${body.slice(0, 200)}` : '';
  if (!body || typeof body !== 'object') return '';
  const record = body as Record<string, unknown>;
  for (const key of ['error', 'detail', 'message']) {
    if (typeof record[key] === 'string') return `: ${record[key]}`;
  }
  const fields = Object.entries(record)
    .filter(([, v]) => Array.isArray(v))
    .map(([k, v]) => `${k}: ${(v as unknown[]).join(' ')}`);
  return fields.length ? `: ${fields.join('; ')}` : '';
}

/** 400: invalid input. `fields` maps each rejected field to its messages. */
export class BadRequestError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'BadRequestError';
  /** Always `'BadRequestError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'BadRequestError' as const;
  /** Field name → messages, from the `{ "<field>": ["<message>"] }` body. Empty when the body had another shape. */
  readonly fields: Record<string, string[]>;

  /**
   * As {@link APIError}'s constructor; also reads the body's `{ "<field>": ["<message>"] }` map into
   * `fields`.
   */
  constructor(
    status: number,
    headers: Headers | Record<string, string>,
    body: unknown,
    request: RequestContext,
  ) {
    super(status, headers, body, request);
    this.fields = fieldsOf(body);
  }
}

function fieldsOf(body: unknown): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) return fields;
  for (const [key, value] of Object.entries(body)) {
    if (Array.isArray(value)) fields[key] = value.map(String);
    else if (typeof value === 'string') fields[key] = [value];
  }
  return fields;
}

/** 401: the API key is missing or invalid. */
export class AuthenticationError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'AuthenticationError';
  /** Always `'AuthenticationError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'AuthenticationError' as const;
}

/** 403: the key may not do this. */
export class PermissionDeniedError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'PermissionDeniedError';
  /** Always `'PermissionDeniedError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'PermissionDeniedError' as const;
}

/** 404: unknown account, tier or product — or a wrong `baseUrl`. `error` is the server's message. */
export class NotFoundError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'NotFoundError';
  /** Always `'NotFoundError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'NotFoundError' as const;
  /** The `error` message of the body, e.g. `Account not found or invalid subscription tier`; `undefined` for any other body. */
  readonly error: string | undefined;

  /** As {@link APIError}'s constructor; also reads the body's `error` message into `error`. */
  constructor(
    status: number,
    headers: Headers | Record<string, string>,
    body: unknown,
    request: RequestContext,
  ) {
    super(status, headers, body, request);
    const error = (body as { error?: unknown } | undefined)?.error;
    this.error = typeof error === 'string' ? error : undefined;
  }
}

/** 409: conflict (retried). */
export class ConflictError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'ConflictError';
  /** Always `'ConflictError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'ConflictError' as const;
}

/** 422: the server understood the request but refused it. */
export class UnprocessableEntityError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'UnprocessableEntityError';
  /** Always `'UnprocessableEntityError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'UnprocessableEntityError' as const;
}

/** 429: rate limited. `retryAfterMs` is the server's Retry-After, when it sent one. */
export class RateLimitError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'RateLimitError';
  /** Always `'RateLimitError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'RateLimitError' as const;
}

/** 5xx: the server failed (retried). */
export class InternalServerError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'InternalServerError';
  /** Always `'InternalServerError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'InternalServerError' as const;
}

/** How many attempts a call made and how long it took, for the final error's message. */
export interface AttemptStats {
  /** Attempts made, the first included. */
  attempts: number;
  /** Milliseconds from the first attempt to giving up. */
  elapsedMs: number;
}

/**
 * No usable response: DNS failure, refused or reset connection, or a body cut short. `cause` holds
 * the underlying error; the message names it (`ECONNREFUSED 127.0.0.1:4010`), with the attempts
 * made and the time spent.
 */
export class APIConnectionError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APIConnectionError';
  /** `'APIConnectionError'`, or `'APITimeoutError'` for the subclass. */
  override readonly name: 'APIConnectionError' | 'APITimeoutError' = 'APIConnectionError';
  /** SDK method, HTTP method and path of the failed request. */
  readonly request: RequestContext;
  /** Attempts made before giving up (1 when the call was not retried). */
  readonly attempts: number;
  /** Milliseconds from the first attempt to giving up. */
  readonly elapsedMs: number;

  /**
   * Built by the SDK when no usable response came.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param options - `cause`: the underlying error; `message`: replaces the text after the request
   * description; `attempts` and `elapsedMs`: the {@link AttemptStats} of the call (default 1 and 0).
   */
  constructor(
    request: RequestContext,
    options: { cause?: unknown; message?: string | undefined } & Partial<AttemptStats> = {},
  ) {
    const { attempts = 1, elapsedMs = 0 } = options;
    const what = options.message ?? `: connection error: ${causeText(options.cause)}`;
    super(`${describe(request)}${what}${statsText(attempts, elapsedMs)}`, { cause: options.cause });
    this.request = request;
    this.attempts = attempts;
    this.elapsedMs = elapsedMs;
  }
}

function statsText(attempts: number, elapsedMs: number): string {
  return attempts > 1 ? ` (${attempts} attempts in ${(elapsedMs / 1000).toFixed(1)} s)` : '';
}

/** `ECONNREFUSED 127.0.0.1:4010`, `UND_ERR_SOCKET other side closed`: the deepest code and address in a cause chain. */
function causeText(cause: unknown): string {
  let code: string | undefined;
  let where: string | undefined;
  let message: string | undefined;
  for (let c = cause, depth = 0; c && typeof c === 'object' && depth < 5; depth++) {
    const e = c as {
      code?: unknown;
      address?: unknown;
      port?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (typeof e.code === 'string') code = e.code;
    if (typeof e.address === 'string') where = e.port === undefined ? e.address : `${e.address}:${e.port}`;
    if (typeof e.message === 'string' && e.message) message = e.message;
    c = e.cause;
  }
  if (code && where) return `${code} ${where}`;
  if (code) return message && !message.includes(code) ? `${code} ${message}` : (message ?? code);
  return message ?? 'no response';
}

/** An attempt took longer than `timeout` ms, headers and body together (retried like a connection error). */
export class APITimeoutError extends APIConnectionError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APITimeoutError';
  /** Always `'APITimeoutError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'APITimeoutError' as const;
  /** The per-attempt timeout that ran out, in ms. */
  readonly timeoutMs: number;

  /**
   * Built by the SDK when an attempt outlives the `timeout` option.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param timeoutMs - The per-attempt timeout that ran out.
   * @param stats - Attempts made and time spent (default 1 and 0).
   */
  constructor(request: RequestContext, timeoutMs: number, stats: Partial<AttemptStats> = {}) {
    super(request, { ...stats, message: ` timed out after ${timeoutMs} ms` });
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's `AbortSignal` fired, during a request or a wait between retries. */
export class APIUserAbortError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APIUserAbortError';
  /** Always `'APIUserAbortError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'APIUserAbortError' as const;
  /** SDK method, HTTP method and path of the aborted request. */
  readonly request: RequestContext;

  /**
   * Built by the SDK when the caller's signal fires.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param options - `cause`: the signal's reason.
   */
  constructor(request: RequestContext, options?: { cause?: unknown }) {
    super(`${describe(request)} was aborted`, options);
    this.request = request;
  }
}

/** A response body was larger than `maxResponseBytes`; reading stopped there and the connection was dropped. */
export class ResponseTooLargeError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'ResponseTooLargeError';
  /** Always `'ResponseTooLargeError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'ResponseTooLargeError' as const;
  /** SDK method, HTTP method and path. */
  readonly request: RequestContext;
  /** HTTP status of the response. */
  readonly status: number;
  /** The limit, in bytes (after decompression). */
  readonly limit: number;
  /** The server's id for this request, when it sent one. */
  readonly requestId: string | undefined;

  /**
   * Built by the SDK when a body passes `maxResponseBytes`.
   *
   * @param request - SDK method, HTTP method and path of the request.
   * @param status - HTTP status of the response.
   * @param limit - The limit that was passed, in bytes.
   * @param requestId - The server's request id, when it sent one.
   */
  constructor(request: RequestContext, status: number, limit: number, requestId: string | undefined) {
    super(
      `${describe(request)} answered ${status} with a body over maxResponseBytes (${limit} bytes); reading stopped`,
    );
    this.request = request;
    this.status = status;
    this.limit = limit;
    this.requestId = requestId;
  }
}

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
    super(`${describe(request)} returned an unexpected body: ${shown}`);
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
  /** Writing or syncing failed: what was being appended was not stored. */
  | 'io'
  /** The spool is not open (never opened, or closed). */
  | 'closed'
  /** The spool's store (Redis) failed or did not answer within `timeoutMs`: nothing was stored. */
  | 'unavailable'
  /** A replace found a member acknowledged or claimed elsewhere meanwhile: nothing was written. */
  | 'conflict';

/** A durable spool (`fileSpool` of `billing-sdk/node`, `redisSpool` of `billing-sdk/redis`) could not be opened or could not store events. */
export class SpoolError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'SpoolError';
  /** Always `'SpoolError'`: the literal that `switch (err.name)` narrows on. */
  override readonly name = 'SpoolError' as const;
  /** What failed. */
  readonly code: SpoolErrorCode;

  /**
   * Built by a spool when it cannot do what was asked.
   *
   * @param code - What failed.
   * @param message - Human-readable detail (names the file).
   * @param options - `cause`: the underlying error, when there is one.
   */
  constructor(code: SpoolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Why a shared store failed. */
export type StoreErrorCode =
  /** The store (Redis) failed or did not answer within its `timeoutMs`: the step did not happen, or its outcome is unknown. */
  | 'unavailable'
  /** The store answered something the SDK did not expect (another program's key of the same name, a server too old). */
  | 'unexpected_reply';

/**
 * A shared store of `billing-sdk/redis` (`redisDedupeStore`, `redisCooldown`, `redisAccessStore`)
 * failed or answered something unexpected. What reaches `onError` callbacks and webhook handlers
 * from those stores is this class (the client's own error is its `cause`).
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
   * @param options - `cause`: the Redis client's error, when there is one.
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
  /** `isBillingError(err, 'UsageTrackerError')` narrows `err` to {@link UsageTrackerError}. */
  UsageTrackerError: UsageTrackerError;
}

/**
 * Names of every error class, for `switch (err.name)`: the keys of {@link BillingErrorClasses}, the
 * one table of names (a class's own `name` and `brand` must match its key there).
 */
export type BillingErrorName = keyof BillingErrorClasses;

/** Names of the classes that stand for an HTTP error status: those of the table that are {@link APIError}s. */
export type APIErrorName = {
  [N in BillingErrorName]: BillingErrorClasses[N] extends Pick<APIError, 'status' | 'body'> ? N : never;
}[BillingErrorName];

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
