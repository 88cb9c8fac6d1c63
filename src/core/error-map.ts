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
} from './errors.js';
import { parseRetryAfter } from './retry-after.js';

type APIErrorClass = new (
  status: number,
  headers: Record<string, string>,
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
};

/** Builds the typed error for a non-2xx response. */
export function errorForStatus(
  status: number,
  headers: Record<string, string>,
  body: unknown,
  request: RequestContext,
  now: number = Date.now(),
): APIError {
  if (status === 429) {
    return new RateLimitError(status, headers, body, request, parseRetryAfter(headers, now));
  }
  const ErrorClass = byStatus[status] ?? (status >= 500 ? InternalServerError : APIError);
  return new ErrorClass(status, headers, body, request);
}
