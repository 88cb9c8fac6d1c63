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
import { headersToObject } from './redact.js';
import { parseRetryAfter } from './retry-after.js';

/** Names of the classes that stand for an HTTP error status. */
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

/** Names of every error class, for `switch (err.name)`. */
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
  | 'WebhookError';

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
    const ctor = (proto as { constructor?: Record<string, unknown> }).constructor;
    if (ctor === cls || (brand && ctor && Object.hasOwn(ctor, BRAND) && ctor[BRAND] === brand)) return true;
  }
  return false;
}

/** Base class of every error the SDK throws. */
export class BillingError extends Error {
  /** @internal */
  static readonly brand: BillingErrorName = 'BillingError';
  override readonly name: BillingErrorName = 'BillingError';
  /**
   * The idempotency key of the debit or usage event whose call failed (set on every error of
   * `usage.debit` and `usage.record`): call again with the same `event_key` and the service
   * applies it at most once.
   */
  declare readonly event_key?: string;

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
    return {
      ...(this as object),
      name: this.name,
      message: this.message,
      ...(cause === undefined
        ? {}
        : { cause: cause instanceof Error ? `${cause.name}: ${cause.message}` : cause }),
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

  constructor(
    status: number,
    headers: Headers | Record<string, string>,
    body: unknown,
    request: RequestContext,
  ) {
    const plain = headers instanceof Headers ? headersToObject(headers) : headers;
    super(`${describe(request)} ${summary(status, plain, body)}`);
    this.status = status;
    this.headers = plain;
    this.body = body;
    this.request = request;
    this.requestId = plain['x-request-id'] ?? plain['request-id'];
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
  override readonly name = 'BadRequestError' as const;
  /** Field name → messages, from the `{ "<field>": ["<message>"] }` body. Empty when the body had another shape. */
  readonly fields: Record<string, string[]>;

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
  override readonly name = 'AuthenticationError' as const;
}

/** 403: the key may not do this. */
export class PermissionDeniedError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'PermissionDeniedError';
  override readonly name = 'PermissionDeniedError' as const;
}

/** 404: unknown account, tier or product — or a wrong `baseUrl`. `error` is the server's message. */
export class NotFoundError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'NotFoundError';
  override readonly name = 'NotFoundError' as const;
  /** The `error` message of the body, e.g. `Account not found or invalid subscription tier`; `undefined` for any other body. */
  readonly error: string | undefined;

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
  override readonly name = 'ConflictError' as const;
}

/** 422: the server understood the request but refused it. */
export class UnprocessableEntityError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'UnprocessableEntityError';
  override readonly name = 'UnprocessableEntityError' as const;
}

/** 429: rate limited. `retryAfterMs` is the server's Retry-After, when it sent one. */
export class RateLimitError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'RateLimitError';
  override readonly name = 'RateLimitError' as const;
}

/** 5xx: the server failed (retried). */
export class InternalServerError extends APIError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'InternalServerError';
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
  override readonly name: 'APIConnectionError' | 'APITimeoutError' = 'APIConnectionError';
  /** SDK method, HTTP method and path of the failed request. */
  readonly request: RequestContext;
  /** Attempts made before giving up (1 when the call was not retried). */
  readonly attempts: number;
  /** Milliseconds from the first attempt to giving up. */
  readonly elapsedMs: number;

  constructor(
    request: RequestContext,
    options: { cause?: unknown; message?: string } & Partial<AttemptStats> = {},
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
    const e = c as { code?: unknown; address?: unknown; port?: unknown; message?: unknown; cause?: unknown };
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
  override readonly name = 'APITimeoutError' as const;
  /** The per-attempt timeout that ran out, in ms. */
  readonly timeoutMs: number;

  constructor(request: RequestContext, timeoutMs: number, stats: Partial<AttemptStats> = {}) {
    super(request, stats);
    this.timeoutMs = timeoutMs;
    this.message = `${describe(request)} timed out after ${timeoutMs} ms${statsText(this.attempts, this.elapsedMs)}`;
    // The stack was captured with the base class's message; keep its first line truthful.
    if (this.stack)
      this.stack = `${this.name}: ${this.message}\n${this.stack.split('\n').slice(1).join('\n')}`;
  }
}

/** The caller's `AbortSignal` fired, during a request or a wait between retries. */
export class APIUserAbortError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'APIUserAbortError';
  override readonly name = 'APIUserAbortError' as const;
  /** SDK method, HTTP method and path of the aborted request. */
  readonly request: RequestContext;

  constructor(request: RequestContext, options?: { cause?: unknown }) {
    super(`${describe(request)} was aborted`, options);
    this.request = request;
  }
}

/** A response body was larger than `maxResponseBytes`; reading stopped there and the connection was dropped. */
export class ResponseTooLargeError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'ResponseTooLargeError';
  override readonly name = 'ResponseTooLargeError' as const;
  /** SDK method, HTTP method and path. */
  readonly request: RequestContext;
  /** HTTP status of the response. */
  readonly status: number;
  /** The limit, in bytes (after decompression). */
  readonly limit: number;
  /** The server's id for this request, when it sent one. */
  readonly requestId: string | undefined;

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
  override readonly name = 'InvalidRequestError' as const;
  /** The SDK method called. */
  readonly operation: string;
  /** Every problem found. */
  readonly issues: InvalidRequestIssue[];

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
  override readonly name = 'ResponseValidationError' as const;
  /** SDK method, HTTP method and path. */
  readonly request: RequestContext;
  /** Every mismatch found. */
  readonly issues: ValidationIssue[];
  /** The body as received (parsed JSON, or text when it was not JSON). */
  readonly body: unknown;

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
  override readonly name = 'HostedLinkError' as const;
  /** What failed. */
  readonly code: HostedLinkErrorCode;

  constructor(code: HostedLinkErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A webhook body was not a valid event. */
export class WebhookError extends BillingError {
  /** @internal */
  static override readonly brand: BillingErrorName = 'WebhookError';
  override readonly name = 'WebhookError' as const;
  /** The validation issues, when the body was JSON of the wrong shape. */
  readonly issues: ValidationIssue[];

  constructor(message: string, issues: ValidationIssue[] = []) {
    super(message);
    this.issues = issues;
  }
}

/** Each error name and the class it stands for (a name also matches its subclasses, as `instanceof` does). */
export interface BillingErrorClasses {
  BillingError: BillingError;
  APIError: APIError;
  BadRequestError: BadRequestError;
  AuthenticationError: AuthenticationError;
  PermissionDeniedError: PermissionDeniedError;
  NotFoundError: NotFoundError;
  ConflictError: ConflictError;
  UnprocessableEntityError: UnprocessableEntityError;
  RateLimitError: RateLimitError;
  InternalServerError: InternalServerError;
  APIConnectionError: APIConnectionError;
  APITimeoutError: APITimeoutError;
  APIUserAbortError: APIUserAbortError;
  ResponseTooLargeError: ResponseTooLargeError;
  InvalidRequestError: InvalidRequestError;
  ResponseValidationError: ResponseValidationError;
  PaginationError: PaginationError;
  HostedLinkError: HostedLinkError;
  WebhookError: WebhookError;
}

/**
 * Every error the SDK throws, as a union on `name`: after {@link isBillingError}, `switch (err.name)`
 * narrows to the class (`case 'RateLimitError': err.retryAfterMs`).
 */
export type AnyBillingError = {
  [N in BillingErrorName]: BillingErrorClasses[N] & { readonly name: N };
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
