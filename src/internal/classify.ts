/**
 * What an answer is: a result, or the error of its status. {@link byStatus} is the one table that
 * decides which class a failed response becomes.
 *
 * @module
 */
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  type RequestContext,
  UnprocessableEntityError,
} from '../core/errors/index.js';
import type { WireResponse } from '../platform/engine.js';
import { plainHeaders, scrubValue } from '../util/redact.js';

/** What one attempt produced: a 2xx, or a non-2xx that the endpoint calls a result. */
export interface Exchange {
  status: number;
  /** As kept (`plainHeaders`): no credentials, no URL query, no secret. */
  headers: Record<string, string>;
  body: unknown;
}

/**
 * A 2xx, or a non-2xx the endpoint calls a result (`isResult`), is the exchange; anything else
 * (3xx included: redirects are never followed) becomes the error of its status. The one place an
 * answer becomes what the caller keeps: its headers are kept as `plainHeaders` has them (no
 * credential, no URL query, `secrets` redacted), and an error's body has `secrets` redacted too,
 * before the message (and so the stack) is built from them.
 */
export function classify(
  answer: WireResponse,
  isResult: ((status: number, body: unknown) => boolean) | undefined,
  context: RequestContext,
  secrets: readonly string[] = [],
): Exchange {
  const { status } = answer;
  const headers = plainHeaders(answer.headers, secrets);
  const body = parseBody(answer.text);
  if ((status >= 200 && status < 300) || isResult?.(status, body)) return { status, headers, body };
  throw errorForStatus(status, headers, scrubValue(body, secrets), context);
}

type APIErrorClass = new (
  status: number,
  headers: Headers | Record<string, string>,
  body: unknown,
  request: RequestContext,
) => APIError;

/** Status → error class: the one table that decides which class a failed response becomes. */
const byStatus: Record<number, APIErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** Builds the typed error for a response that is not an answer (a 3xx, which is never followed, included). */
export function errorForStatus(
  status: number,
  headers: Headers | Record<string, string>,
  body: unknown,
  request: RequestContext,
): APIError {
  const ErrorClass = byStatus[status] ?? (status >= 500 ? InternalServerError : APIError);
  return new ErrorClass(status, headers, body, request);
}

/** JSON when it parses, the text itself when not (kept for error bodies), `undefined` when empty. */
function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
