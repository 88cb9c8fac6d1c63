/**
 * The errors of a response with an error status: {@link APIError} and one subclass per status the
 * SDK tells apart (internal/classify.ts picks the class).
 *
 * @module
 */
import { plainHeaders, requestIdOf } from '../../util/redact.js';
import { parseRetryAfter } from '../../util/retry-after.js';
import { BillingError, describeRequest, type RequestContext } from './base.js';
import type { APIErrorName, BillingErrorName } from './names.js';

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
    super(`${describeRequest(request)} ${summary(status, plain, body)}`);
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
