/**
 * What a resource declares for each method: an {@link Endpoint} (checks, how to build the request,
 * how to read the answer), and {@link buildRequest}, which runs its builder for one call.
 *
 * @module
 */
import { type BillingError, InvalidRequestError } from '../core/errors/index.js';
import type { CrossRule, ParamRules } from './checks.js';
import type { Schema } from './schema.js';
import { type QueryParams, queryString, type RoutedPath, UnsafeUrlValue } from './url.js';

/** Path, query and body of one call, built by the endpoint from its checked parameters. */
export interface BuiltRequest {
  /** Path relative to the base URL: `invoices/`, or built with the `path` tag when it holds a value. */
  path: string | RoutedPath;
  query?: QueryParams | undefined;
  /** JSON body. */
  body?: object | undefined;
  /** The call's idempotency key: every error of the call carries it as `event_key`. */
  eventKey?: string | undefined;
}

/**
 * Everything the SDK knows about one endpoint: how to check and build a call, how to read the
 * answer. `P` is the method's parameters, `R` the response body's type (from the schema), `T` the
 * method's result (from `transform`, else `R`), `B` what `build` returns (when `transform` needs
 * more of it than {@link BuiltRequest} promises). Resources declare one per method; the request
 * path (request.ts) does the rest.
 */
export interface Endpoint<P, R, T = R, B extends BuiltRequest = BuiltRequest> {
  /** SDK method name, for messages: `invoices.list`. Named here and nowhere else. */
  operation: string;
  method: 'GET' | 'POST';
  /** Every parameter the method takes, with its rules. */
  rules: ParamRules<P>;
  /** Rules between parameters (`tier` needs `subscription`). */
  cross?: CrossRule | undefined;
  /** Builds the request from the checked parameters; runs once per call, before the first attempt. */
  build(params: P): B;
  /** Schema of the response body. */
  schema: Schema<R>;
  /** A POST that is safe to send twice (its body carries an idempotency key): retried like a GET. */
  idempotent?: boolean | undefined;
  /** An empty 2xx body is an answer: it is validated as `null`. */
  allowEmpty?: boolean | undefined;
  /** A non-2xx response whose body is a result (a refusal), not an error. */
  isResult?: ((status: number, body: unknown) => boolean) | undefined;
  /** Turns the validated body into the method's result. Default: the body itself. */
  transform?: ((data: R, request: B) => T) | undefined;
  /** An error that is an answer after all (a documented "not found"): its result, else `undefined`. */
  recover?: (error: BillingError) => T | undefined;
}

/**
 * Declares an endpoint (see {@link Endpoint} for `P`, `R`, `T`, `B`). Resources declare one per
 * method at module level: checks, path, schema and retry safety live there, and the method only
 * names it. The rules are checked against `P`: one per parameter, no more.
 */
export function endpoint<P, R, T = R, B extends BuiltRequest = BuiltRequest>(
  spec: Endpoint<P, R, T, B>,
): Endpoint<P, R, T, B> {
  return spec;
}

/** One call's request as it goes on the wire, built once before the first attempt. */
export interface WireParts<B extends BuiltRequest> {
  /** What the endpoint's `build` returned. */
  built: B;
  /** The path relative to the base URL, values encoded. */
  path: string;
  /** The path's template, values left out (for tracing). */
  route: string;
  /** The query string, `?` included, or `''`. */
  search: string;
  /** The JSON body, serialised. */
  body: string | undefined;
}

/**
 * Runs the endpoint's builder and serialises the body. A value the URL helpers refuse becomes an
 * error naming the operation, before anything is sent. The body needs no such guard: the rules
 * admit only scalars and `jsonObject`s, which JSON carries whole.
 */
export function buildRequest<P, R, T, B extends BuiltRequest>(
  endpoint: Endpoint<P, R, T, B>,
  params: Record<string, unknown>,
): WireParts<B> {
  try {
    // The one place parameters become `P`: `check` let through only the fields of its rules,
    // each passing them.
    const built = endpoint.build(params as P);
    const { path, route } =
      typeof built.path === 'string' ? { path: built.path, route: built.path } : built.path;
    // Encoded once, here: a value it refuses fails the call before anything is sent.
    const search = queryString(built.query);
    const body = built.body === undefined ? undefined : JSON.stringify(built.body);
    return { built, path, route, search, body };
  } catch (error) {
    if (error instanceof UnsafeUrlValue) throw new InvalidRequestError(endpoint.operation, [error.issue]);
    throw error;
  }
}
