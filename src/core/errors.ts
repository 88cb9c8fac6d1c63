/**
 * The SDK's error hierarchy. Every error thrown by billing-sdk is a {@link BillingError}; each class
 * carries a literal `name` so callers can switch on it without `instanceof` across bundles.
 *
 * No error ever holds a request header, so an API key cannot leak through `String(err)`,
 * `JSON.stringify(err)` or a logger.
 *
 * @example
 * ```ts
 * try {
 *   await billing.invoices.list({ account_ref_id: 'acct_1' });
 * } catch (err) {
 *   if (err instanceof RateLimitError) console.log('retry in', err.retryAfterMs);
 *   else if (err instanceof NotFoundError) console.log(err.error);
 *   else throw err;
 * }
 * ```
 * @module
 */

/** Names of every error class, for `switch (err.name)`. */
export type BillingErrorName =
  | 'BillingError'
  | APIErrorName
  | 'APIConnectionError'
  | 'APITimeoutError'
  | 'APIUserAbortError'
  | 'InvalidRequestError'
  | 'ResponseValidationError'
  | 'PaginationError'
  | 'HostedLinkError'
  | 'WebhookError';

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

/** Where a request went: the SDK method, the HTTP method and the URL path (never the query string, which may hold an e-mail). */
export interface RequestContext {
  /** SDK method, e.g. `invoices.list`. */
  operation: string;
  /** HTTP method. */
  method: string;
  /** URL path, e.g. `/api/invoices/`. */
  path: string;
}

/** Base class of every error the SDK throws. */
export class BillingError extends Error {
  override readonly name: BillingErrorName = 'BillingError';

  /** A plain object for loggers and `JSON.stringify`, with the message (which `Error` keeps non-enumerable). */
  toJSON(): Record<string, unknown> {
    return { ...(this as object), name: this.name, message: this.message };
  }
}

function describe(ctx: RequestContext): string {
  return `${ctx.operation} (${ctx.method} ${ctx.path})`;
}

/** The server answered with an error status. Subclasses narrow it by status. */
export class APIError extends BillingError {
  override readonly name: APIErrorName = 'APIError';
  /** HTTP status code. */
  readonly status: number;
  /** Response headers, lower-cased, with cookies removed. */
  readonly headers: Record<string, string>;
  /** The response body: parsed JSON, or the raw text when it was not JSON, or `undefined` when empty. */
  readonly body: unknown;
  /** SDK method, HTTP method and path of the failed request. */
  readonly request: RequestContext;

  constructor(status: number, headers: Record<string, string>, body: unknown, request: RequestContext) {
    super(`${describe(request)} failed with ${status}${detailOf(body)}`);
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.request = request;
  }
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
  override readonly name = 'BadRequestError' as const;
  /** Field name → messages, from the `{ "<field>": ["<message>"] }` body. Empty when the body had another shape. */
  readonly fields: Record<string, string[]>;

  constructor(status: number, headers: Record<string, string>, body: unknown, request: RequestContext) {
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
  override readonly name = 'AuthenticationError' as const;
}

/** 403: the key may not do this. */
export class PermissionDeniedError extends APIError {
  override readonly name = 'PermissionDeniedError' as const;
}

/** 404: unknown account, tier or product. `error` is the server's message. */
export class NotFoundError extends APIError {
  override readonly name = 'NotFoundError' as const;
  /** The `error` message of the body, e.g. `Account not found or invalid subscription tier`. */
  readonly error: string | undefined;

  constructor(status: number, headers: Record<string, string>, body: unknown, request: RequestContext) {
    super(status, headers, body, request);
    const error = (body as { error?: unknown } | undefined)?.error;
    this.error = typeof error === 'string' ? error : undefined;
  }
}

/** 409: conflict (retried). */
export class ConflictError extends APIError {
  override readonly name = 'ConflictError' as const;
}

/** 422: the server understood the request but refused it. */
export class UnprocessableEntityError extends APIError {
  override readonly name = 'UnprocessableEntityError' as const;
}

/** 429: rate limited. `retryAfterMs` is the server's Retry-After, when it sent one. */
export class RateLimitError extends APIError {
  override readonly name = 'RateLimitError' as const;
  /** How long the server asked to wait, in ms; `undefined` when it sent no Retry-After. */
  readonly retryAfterMs: number | undefined;

  constructor(
    status: number,
    headers: Record<string, string>,
    body: unknown,
    request: RequestContext,
    retryAfterMs?: number,
  ) {
    super(status, headers, body, request);
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx: the server failed (retried). */
export class InternalServerError extends APIError {
  override readonly name = 'InternalServerError' as const;
}

/** No response: DNS, refused or reset connection. `cause` holds the underlying error. */
export class APIConnectionError extends BillingError {
  override readonly name: 'APIConnectionError' | 'APITimeoutError' = 'APIConnectionError';
  /** SDK method, HTTP method and path of the failed request. */
  readonly request: RequestContext;

  constructor(request: RequestContext, message?: string, options?: { cause?: unknown }) {
    super(message ?? `${describe(request)}: connection error`, options);
    this.request = request;
  }
}

/** An attempt took longer than `timeout` ms (retried like a connection error). */
export class APITimeoutError extends APIConnectionError {
  override readonly name = 'APITimeoutError' as const;

  constructor(request: RequestContext, timeoutMs: number) {
    super(request, `${describe(request)} timed out after ${timeoutMs} ms`);
  }
}

/** The caller's `AbortSignal` fired, during a request or a wait between retries. */
export class APIUserAbortError extends BillingError {
  override readonly name = 'APIUserAbortError' as const;
  /** SDK method, HTTP method and path of the aborted request. */
  readonly request: RequestContext;

  constructor(request: RequestContext, options?: { cause?: unknown }) {
    super(`${describe(request)} was aborted`, options);
    this.request = request;
  }
}

/** One problem with the parameters of a call, found before anything was sent. */
export interface InvalidRequestIssue {
  /** The parameter, e.g. `page_size`. */
  field: string;
  /** What is wrong with it. */
  message: string;
}

/** The call's parameters break a rule of the API; no request was sent. */
export class InvalidRequestError extends BillingError {
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
  override readonly name = 'WebhookError' as const;
  /** The validation issues, when the body was JSON of the wrong shape. */
  readonly issues: ValidationIssue[];

  constructor(message: string, issues: ValidationIssue[] = []) {
    super(message);
    this.issues = issues;
  }
}
