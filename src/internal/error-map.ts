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
} from '../core/errors.js';

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
