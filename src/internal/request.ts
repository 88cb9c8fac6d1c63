import { type APIResponseInfo, responseInfo, type WithResponse } from '../core/api-promise.js';
import type { AttemptTrace, RequestTrace } from '../core/diagnostics.js';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  BillingError,
  ConflictError,
  InternalServerError,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  type RequestContext,
  ResponseTooLargeError,
  UnprocessableEntityError,
} from '../core/errors.js';
import { createLogger, type SdkLogger } from '../core/logger.js';
import { loadFirstPage, type PageEnvelope, PagePromise } from '../core/pagination.js';
import type { WireResponse } from '../platform/engine.js';
import { BodyTooLarge } from '../platform/engine.js';
import { defaultEngine, loadPRetry, userAgent } from '../platform/server.js';
import { isTraced, traced, tracingChannel } from '../util/diagnostics.js';
import { requestIdOf, scrubCause } from '../util/redact.js';
import { anySignal, untilSignal } from '../util/signals.js';
import { type CrossRule, check, type ParamRules } from './checks.js';
import { lowerKeys } from './headers.js';
import { type CallOptions, callOptions, type ResolvedOptions } from './options.js';
import { retryDecision } from './retry.js';
import { type Schema, validate } from './schema.js';
import { Transport } from './transport/transport.js';
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
 * path below does the rest.
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

/** A call whose checks passed: what every attempt sends. */
interface Call<P, R, T, B extends BuiltRequest> {
  endpoint: Endpoint<P, R, T, B>;
  built: B;
  /** The path relative to the base URL, values encoded, and its template (for tracing). */
  path: string;
  route: string;
  options: CallOptions;
  context: RequestContext;
  /** The full URL, query included: built once, when the call is checked. */
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** What one attempt produced: a 2xx, or a non-2xx that the endpoint calls a result. */
interface Exchange {
  status: number;
  headers: Headers;
  body: unknown;
}

/** The SDK's tracing channels (see core/diagnostics.ts); `undefined` where the runtime has none. */
const requestTracing = tracingChannel('billing-sdk:request');
const attemptTracing = tracingChannel('billing-sdk:attempt');

/** setTimeout cannot hold more; a longer timeout means none (a larger value would fire at once). */
const MAX_TIMER = 2_147_483_647;

/**
 * The one request path of the SDK. Reading order: {@link ApiCore.call} → `#prepare` (check and build)
 * → `#send` (retry loop) → `#attempt` (one exchange under one deadline) → `#classify` → back in
 * `#send`: validate. Knows nothing about billing resources. Holds the API key in private fields,
 * so it never shows when a client is logged or inspected.
 */
export class ApiCore {
  /** Options after defaults; the key itself lives only in `#authHeaders` and `#secrets`. */
  readonly #options: Omit<ResolvedOptions, 'apiKey'>;
  readonly #transport: Transport;
  /** What a call without its own headers sends, built once. */
  readonly #baseHeaders: Record<string, string>;
  readonly #defaultHeaders: Record<string, string>;
  readonly #authHeaders: Record<string, string>;
  /** Strings that must never appear in a log line or an error's cause. */
  readonly #secrets: readonly string[];
  /** Logger that scrubs the API key from every line and never throws. */
  readonly logger: SdkLogger;

  constructor(options: ResolvedOptions) {
    const { apiKey, ...rest } = options;
    this.#options = rest;
    this.#transport = new Transport(options.fetch, defaultEngine(options.dispatcher));
    this.#secrets = [apiKey];
    this.logger = createLogger(options.logger, options.logLevel, this.#secrets);
    this.#authHeaders =
      options.authHeader === 'x-api-key' ? { 'x-api-key': apiKey } : { authorization: `Bearer ${apiKey}` };
    this.#defaultHeaders = { accept: 'application/json', ...userAgent(), ...lowerKeys(options.headers) };
    this.#baseHeaders = { ...this.#defaultHeaders, ...this.#authHeaders };
  }

  /**
   * One call: check and build, send with retries, validate. An async function, so bad input
   * rejects the returned promise (never throws where the method was called) and nothing is sent.
   */
  async call<P, R, T, B extends BuiltRequest>(
    endpoint: Endpoint<P, R, T, B>,
    params: unknown,
    options: unknown,
  ): Promise<WithResponse<T>> {
    return this.#send(this.#prepare(endpoint, params, options));
  }

  /**
   * A paginated GET. The checks run when the list is first awaited or iterated, so a bad parameter
   * rejects (nothing is sent); every page is the same checked request with another `page`.
   */
  list<P, T, B extends BuiltRequest>(
    endpoint: Endpoint<P, PageEnvelope<T>, PageEnvelope<T>, B>,
    params: unknown,
    options: unknown,
  ): PagePromise<T> {
    return new PagePromise(async () => {
      const call = this.#prepare(endpoint, params, options);
      const query: Record<string, unknown> = { ...call.built.query };
      const start = typeof query.page === 'number' ? query.page : 1;
      const pageSize = typeof query.page_size === 'number' ? query.page_size : 20;
      // `page` goes on the wire only when it was asked for or is past the first: products takes no page parameter.
      const load = async (page: number, stop?: AbortSignal) => {
        const caller = call.options.signal;
        const signal = caller && stop ? anySignal([caller, stop]) : (caller ?? stop);
        if (page === start) return this.#send({ ...call, options: { ...call.options, signal } });
        const built = { ...call.built, query: { ...query, page } };
        const url = this.#options.baseUrl + call.path + queryString(built.query);
        return this.#send({ ...call, built, url, options: { ...call.options, signal } });
      };
      return loadFirstPage(load, start, pageSize);
    });
  }

  /** Checks options and parameters, builds path, query, headers and body. Throws {@link InvalidRequestError}. */
  #prepare<P, R, T, B extends BuiltRequest>(
    endpoint: Endpoint<P, R, T, B>,
    params: unknown,
    options: unknown,
  ): Call<P, R, T, B> {
    const { operation, method } = endpoint;
    const call = callOptions(operation, options, this.#options);
    const { built, path, route, search, body } = buildRequest(
      endpoint,
      check(operation, params, endpoint.rules, endpoint.cross),
    );
    return {
      endpoint,
      built,
      path,
      route,
      options: call,
      context: { operation, method, path: this.#options.basePath + path },
      url: this.#options.baseUrl + path + search,
      headers: this.#headers(body !== undefined, call.headers),
      body,
    };
  }

  /**
   * Sends the call, on the `billing-sdk:request` tracing channel when anyone listens (checked once
   * per call: an unobserved call builds no trace).
   */
  #send<P, R, T, B extends BuiltRequest>(call: Call<P, R, T, B>): Promise<WithResponse<T>> {
    const calls = isTraced(requestTracing);
    if (!calls && !isTraced(attemptTracing)) return this.#retried(call, undefined);
    // Attempts point at their call's context even when only attempts are listened to.
    const trace = this.#trace(call);
    return calls
      ? traced(requestTracing, trace, () => this.#retried(call, trace))
      : this.#retried(call, trace);
  }

  /**
   * Runs the attempts under p-retry. After each failure, {@link retryDecision} says whether and
   * when to try again; the wait runs in `onFailedAttempt` (p-retry awaits it), so the server's
   * Retry-After and our backoff are one decision, cancelled by the caller's signal.
   */
  async #retried<P, R, T, B extends BuiltRequest>(
    call: Call<P, R, T, B>,
    trace: RequestTrace | undefined,
  ): Promise<WithResponse<T>> {
    const { endpoint, context, options } = call;
    const { signal } = options;
    const { url } = call;
    const policy = {
      maxRetries: options.maxRetries,
      maxRetryDelay: this.#options.maxRetryDelay,
      idempotent: endpoint.method === 'GET' || endpoint.idempotent === true,
      retryDelay: this.#options.retryDelay,
    };
    const clock = this.#options.clock;
    const started = clock.now();
    let attempts = 0;
    const attempt = () => {
      attempts++;
      const exchange = this.#admitted(call, url, trace, attempts);
      return this.logger.enabled('debug')
        ? this.#logAttempt(exchange, context, attempts, options.maxRetries + 1)
        : exchange;
    };
    const beforeRetry = async (error: unknown, attemptNumber: number) => {
      const decision = retryDecision(error, attemptNumber, policy);
      if (!decision.retry) throw error;
      this.#logRetry(context, error, decision.delayMs, attemptNumber, options.maxRetries);
      await clock.sleep(
        decision.delayMs,
        signal,
        () => new APIUserAbortError(context, { cause: signal?.reason }),
      );
    };
    try {
      let exchange: Exchange;
      try {
        exchange = await attempt();
      } catch (error) {
        // Most calls succeed at once: p-retry (about 11 µs a call) takes over only after a failure,
        // and is loaded then (importing the SDK does not load it).
        await beforeRetry(error, 1);
        const pRetry = await loadPRetry();
        exchange = await pRetry(attempt, {
          retries: options.maxRetries - 1,
          minTimeout: 0,
          // No `signal` for p-retry: each attempt and each wait already stop on it, and p-retry would
          // call `throwIfAborted()`, which a polyfilled signal (accepted by the option check) may lack.
          onFailedAttempt: ({ error, attemptNumber }) => beforeRetry(error, attemptNumber + 1),
        });
      }
      const body = exchange.body === undefined && endpoint.allowEmpty ? null : exchange.body;
      const data = validate(endpoint.schema, body, this.#options.validation, context, this.logger);
      const result = endpoint.transform ? endpoint.transform(data, call.built) : (data as unknown as T);
      return { data: result, response: responseInfo(exchange.status, exchange.headers) };
    } catch (thrown) {
      const error = this.#finalError(thrown, call, attempts, clock.now() - started);
      const recovered = endpoint.recover?.(error);
      if (recovered !== undefined) return { data: recovered, response: responseOf(error) };
      throw error;
    }
  }

  /**
   * One attempt through the client's cooldown: it waits while the cooldown says so (failing at once
   * with {@link RateLimitError} when that is longer than `maxRetryDelay`), then tells the cooldown
   * how it went, so a 429 with Retry-After pauses every request that shares it.
   */
  async #admitted<P, R, T, B extends BuiltRequest>(
    call: Call<P, R, T, B>,
    url: string,
    trace: RequestTrace | undefined,
    n: number,
  ): Promise<Exchange> {
    const { clock, cooldown, maxRetryDelay } = this.#options;
    const { context, options } = call;
    const aborted = () => new APIUserAbortError(context, { cause: options.signal?.reason });
    let grant = await untilSettled(cooldown.acquire(clock.now()), options.signal, aborted);
    while ('waitMs' in grant) {
      if (grant.waitMs > maxRetryDelay) throw cooldownError(context, grant.waitMs);
      await clock.sleep(grant.waitMs, options.signal, aborted);
      grant = await untilSettled(cooldown.acquire(clock.now()), options.signal, aborted);
    }
    let retryAfterMs: number | undefined;
    try {
      // Traced from here: a wait for the cooldown, or a refusal by it, is no attempt (nothing is sent).
      return await (trace
        ? traceAttempt(trace, n, () => this.#attempt(call, url))
        : this.#attempt(call, url));
    } catch (error) {
      if (error instanceof RateLimitError) retryAfterMs = error.retryAfterMs;
      throw error;
    } finally {
      await grant.release(clock.now(), retryAfterMs);
    }
  }

  /**
   * One exchange. One AbortController per attempt: its deadline covers the wait for headers and the
   * body read, and aborting it (deadline, the caller's signal, an oversized body) tears the
   * connection down, so a stalled body never keeps its socket.
   */
  async #attempt<P, R, T, B extends BuiltRequest>(call: Call<P, R, T, B>, url: string): Promise<Exchange> {
    const { context, options } = call;
    const { signal, timeout } = options;
    if (signal?.aborted) throw new APIUserAbortError(context, { cause: signal.reason });
    const controller = new AbortController();
    const forwardAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forwardAbort, { once: true });
    let timedOut = false;
    const timer =
      timeout <= MAX_TIMER
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, timeout)
        : undefined;
    let answer: WireResponse;
    try {
      answer = await this.#transport.send({
        method: call.endpoint.method,
        url,
        headers: call.headers,
        body: call.body,
        signal: controller.signal,
        maxBytes: this.#options.maxResponseBytes,
      });
    } catch (cause) {
      if (cause instanceof BodyTooLarge) {
        controller.abort();
        throw new ResponseTooLargeError(
          context,
          cause.answer?.status ?? 0,
          this.#options.maxResponseBytes,
          requestIdOf(cause.answer?.headers),
        );
      }
      if (signal?.aborted) throw new APIUserAbortError(context, { cause: signal.reason });
      if (timedOut) throw new APITimeoutError(context, timeout);
      throw new APIConnectionError(context, { cause: scrubCause(cause, this.#secrets) });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
    return classify(call, answer.status, answer.headers, parseBody(answer.text));
  }

  /**
   * The error the caller sees: an abort as {@link APIUserAbortError} whatever was in flight; a
   * connection failure restated with the attempts and time spent; every error of a call with an
   * idempotency key carrying it.
   */
  #finalError<P, R, T, B extends BuiltRequest>(
    thrown: unknown,
    call: Call<P, R, T, B>,
    attempts: number,
    elapsedMs: number,
  ): BillingError {
    const { context, options } = call;
    let error: BillingError;
    if (options.signal?.aborted && !(thrown instanceof APIUserAbortError)) {
      error = new APIUserAbortError(context, { cause: options.signal.reason });
    } else if (thrown instanceof APITimeoutError && attempts > 1) {
      error = new APITimeoutError(context, thrown.timeoutMs, { attempts, elapsedMs });
    } else if (thrown instanceof APIConnectionError && attempts > 1) {
      error = new APIConnectionError(context, { cause: thrown.cause, attempts, elapsedMs });
    } else if (thrown instanceof BillingError) {
      error = thrown;
    } else {
      error = new APIConnectionError(context, {
        cause: scrubCause(thrown, this.#secrets),
        attempts,
        elapsedMs,
      });
    }
    if (call.built.eventKey !== undefined)
      Object.defineProperty(error, 'event_key', { value: call.built.eventKey, enumerable: true });
    return error;
  }

  /**
   * The debug line of one attempt: `GET /api/invoices/ → 200 in 12 ms (attempt 1 of 3, request req_…)`,
   * or the error's name when there was no usable answer. Only built when debug logging is on.
   */
  async #logAttempt(
    attempt: Promise<Exchange>,
    context: RequestContext,
    n: number,
    of: number,
  ): Promise<Exchange> {
    const started = this.#options.clock.now();
    let outcome: unknown;
    let requestId: string | undefined;
    try {
      const exchange = await attempt;
      outcome = exchange.status;
      requestId = requestIdOf(exchange.headers);
      return exchange;
    } catch (error) {
      const failed = error as { status?: number; requestId?: string; name?: string };
      outcome = failed.status ?? failed.name;
      requestId = failed.requestId;
      throw error;
    } finally {
      this.logger.log(
        'debug',
        `${context.method} ${context.path} → ${outcome} in ${this.#options.clock.now() - started} ms (attempt ${n} of ${of}${requestId ? `, request ${requestId}` : ''})`,
      );
    }
  }

  #logRetry(
    context: RequestContext,
    error: unknown,
    delayMs: number,
    attempt: number,
    maxRetries: number,
  ): void {
    if (!this.logger.enabled('info')) return;
    const { name, message } = error as Error;
    this.logger.log(
      'info',
      `retrying ${context.method} ${context.path} in ${delayMs} ms (retry ${attempt} of ${maxRetries}) after ${name}: ${message}`,
    );
  }

  /** The context of a traced call: what the call is, never a value it carries. */
  #trace<P, R, T, B extends BuiltRequest>(call: Call<P, R, T, B>): RequestTrace {
    return {
      operation: call.context.operation,
      method: call.endpoint.method,
      route: this.#options.basePath + call.route,
      serverAddress: this.#options.serverAddress,
      serverPort: this.#options.serverPort,
      attempt: 0,
    };
  }

  #headers(hasBody: boolean, extra: Record<string, string> | undefined): Record<string, string> {
    if (!hasBody && !extra) return this.#baseHeaders;
    // Per-call headers override the defaults, never the credentials.
    const headers = { ...this.#defaultHeaders, ...lowerKeys(extra), ...this.#authHeaders };
    if (hasBody) headers['content-type'] = 'application/json';
    return headers;
  }
}

/**
 * Runs the endpoint's builder and serialises the body. A value the URL helpers refuse becomes an
 * error naming the operation, before anything is sent. The body needs no such guard: the rules
 * admit only scalars and `jsonObject`s, which JSON carries whole.
 */
function buildRequest<P, R, T, B extends BuiltRequest>(
  endpoint: Endpoint<P, R, T, B>,
  params: Record<string, unknown>,
): { built: B; path: string; route: string; search: string; body: string | undefined } {
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

/**
 * A 2xx, or a non-2xx the endpoint calls a result, is the exchange; anything else (3xx included:
 * redirects are never followed) becomes the error of its status.
 */
function classify<P, R, T, B extends BuiltRequest>(
  call: Call<P, R, T, B>,
  status: number,
  headers: Headers,
  body: unknown,
): Exchange {
  if ((status >= 200 && status < 300) || call.endpoint.isResult?.(status, body))
    return { status, headers, body };
  throw errorForStatus(status, headers, body, call.context);
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

/**
 * One attempt on the `billing-sdk:attempt` tracing channel; its outcome (status, request id, the
 * server's Retry-After) is noted on the attempt's context and on the call's before the channel's
 * end events. Published only while the attempt channel has a subscriber; noted on the call always.
 */
function traceAttempt(request: RequestTrace, n: number, run: () => Promise<Exchange>): Promise<Exchange> {
  const trace: AttemptTrace = {
    request,
    operation: request.operation,
    method: request.method,
    route: request.route,
    attempt: n,
  };
  request.attempt = n;
  const note = (status: number | undefined, requestId: string | undefined, retryAfterMs?: number) => {
    trace.status = request.status = status;
    trace.requestId = request.requestId = requestId;
    trace.retryAfterMs = request.retryAfterMs = retryAfterMs;
  };
  const noted = async () => {
    try {
      const exchange = await run();
      note(exchange.status, requestIdOf(exchange.headers));
      return exchange;
    } catch (error) {
      const failed = error as { status?: number; requestId?: string; retryAfterMs?: number };
      note(failed.status, failed.requestId, failed.retryAfterMs);
      throw error;
    }
  };
  return isTraced(attemptTracing) ? traced(attemptTracing, trace, noted) : noted();
}

/** `value`, or a rejection with `onAbort()`'s error as soon as `signal` aborts (a wait for a probe is cancellable). */
function untilSettled<T>(
  value: T | Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: () => Error,
): Promise<T> {
  if (!signal || typeof (value as { then?: unknown } | null)?.then !== 'function')
    return Promise.resolve(value);
  return untilSignal(Promise.resolve(value), signal, onAbort);
}

/**
 * The error of a request that the cooldown would hold longer than `maxRetryDelay`: a 429 like the
 * one that started the cooldown, with the wait left as `retryAfterMs`. Nothing was sent.
 */
function cooldownError(context: RequestContext, waitMs: number): RateLimitError {
  const body = {
    detail: `cooling down after a 429 for ${waitMs} more ms (over maxRetryDelay); nothing was sent`,
  };
  return new RateLimitError(429, { 'retry-after-ms': String(waitMs) }, body, context);
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

/** The response info of a recovered error (an `APIError`: the only kind an endpoint recovers from). */
function responseOf(error: BillingError): APIResponseInfo {
  const { status = 0, headers = {} } = error as {
    status?: number | undefined;
    headers?: Record<string, string> | undefined;
  };
  return responseInfo(status, headers);
}
