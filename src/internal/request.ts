import { type APIResponseInfo, responseInfo, type WithResponse } from '../core/api-promise.js';
import { cooldownWindow } from '../core/cooldown.js';
import type { RequestTrace } from '../core/diagnostics.js';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  BillingError,
  RateLimitError,
  type RequestContext,
  ResponseTooLargeError,
  ResponseValidationError,
} from '../core/errors/index.js';
import { createLogger, type SdkLogger } from '../core/logger.js';
import { loadFirstPage, type PageEnvelope, PagePromise } from '../core/pagination.js';
import type { WireResponse } from '../platform/engine.js';
import { BodyTooLarge } from '../platform/engine.js';
import { defaultEngine, loadPRetry, userAgent } from '../platform/server.js';
import { plainHeaders, requestIdOf, scrubCause, scrubValue, secretsOf } from '../util/redact.js';
import { anySignal, untilSignal } from '../util/signals.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { check } from './checks.js';
import { classify, type Exchange } from './classify.js';
import { type BuiltRequest, buildRequest, type Endpoint } from './endpoint.js';
import { lowerKeys } from './headers.js';
import { logAttempt, logRetry, traceAttempt, traceCall } from './observe.js';
import { type CallOptions, callOptions, type ResolvedOptions } from './options.js';
import { retryDecision } from './retry.js';
import { validate } from './schema.js';
import { Transport } from './transport/transport.js';
import { queryString } from './url.js';

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

/**
 * The one request path of the SDK. Reading order: {@link ApiCore.list} or {@link ApiCore.call} →
 * `#prepare` (check and build: checks.ts, options.ts, endpoint.ts) → `#send` (traced when anyone
 * listens: observe.ts) → `#retried` (the retry loop) → `#admitted` (through the cooldown) →
 * `#attempt` (one exchange under one deadline) → `classify` (classify.ts: a result, or the error of
 * its status) → back in `#retried`: validate and transform, or the final error. Knows nothing about
 * billing resources. Holds the API key in private fields, so it never shows when a client is logged
 * or inspected.
 */
export class ApiCore {
  /** Options after defaults; the key itself lives only in `#authHeaders` and `#secrets`. */
  readonly #options: Omit<ResolvedOptions, 'apiKey'>;
  readonly #transport: Transport;
  /** What a call without its own headers sends, built once. */
  readonly #baseHeaders: Record<string, string>;
  readonly #defaultHeaders: Record<string, string>;
  readonly #authHeaders: Record<string, string>;
  /** Strings that must never appear in a log line or any part of an error: the key, and credentials in `headers`. */
  readonly #secrets: readonly string[];
  /** Logger that scrubs the API key from every line and never throws. */
  readonly logger: SdkLogger;

  constructor(options: ResolvedOptions) {
    const { apiKey, ...rest } = options;
    this.#options = rest;
    this.#transport = new Transport(options.fetch, defaultEngine(options.dispatcher));
    this.#secrets = secretsOf(apiKey, lowerKeys(options.headers));
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
        if (page === start)
          return this.#page(this.#send({ ...call, options: { ...call.options, signal } }), call);
        const built = { ...call.built, query: { ...query, page } };
        const url = this.#options.baseUrl + call.path + queryString(built.query);
        return this.#page(this.#send({ ...call, built, url, options: { ...call.options, signal } }), call);
      };
      return loadFirstPage(load, start, pageSize);
    });
  }

  /**
   * A page's answer, once it is one a walk can use (`results` an array, `count` a number): with
   * `validation: 'warn'` or `'off'`, `results: null` would be a bare `TypeError` in the caller's
   * `for await`; it is a {@link ResponseValidationError} instead.
   */
  async #page<T>(
    sent: Promise<WithResponse<PageEnvelope<T>>>,
    call: { context: RequestContext },
  ): Promise<WithResponse<PageEnvelope<T>>> {
    const answer = await sent;
    const { data } = answer as { data: unknown };
    const envelope = data as { count?: unknown; results?: unknown } | null;
    if (typeof envelope !== 'object' || envelope === null) {
      throw unusable(call.context, [], 'expected a page { count, results }', scrubValue(data, this.#secrets));
    }
    if (!Array.isArray(envelope.results)) {
      throw unusable(call.context, ['results'], 'expected an array', scrubValue(data, this.#secrets));
    }
    if (typeof envelope.count !== 'number' || !(envelope.count >= 0)) {
      throw unusable(call.context, ['count'], 'expected a number >= 0', scrubValue(data, this.#secrets));
    }
    return answer;
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

  /** Sends the call, observed: traced when anyone listens (observe.ts). */
  #send<P, R, T, B extends BuiltRequest>(call: Call<P, R, T, B>): Promise<WithResponse<T>> {
    return traceCall(call.endpoint, call.route, this.#options, (trace) => this.#retried(call, trace));
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
        ? logAttempt(this.logger, clock, exchange, context, attempts, options.maxRetries + 1)
        : exchange;
    };
    const beforeRetry = async (error: unknown, attemptNumber: number) => {
      const decision = retryDecision(error, attemptNumber, policy);
      if (!decision.retry) throw error;
      logRetry(this.logger, context, error, decision.delayMs, attemptNumber, options.maxRetries);
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
      return {
        data: this.#usable(call, exchange),
        response: responseInfo(exchange.status, exchange.headers),
      };
    } catch (thrown) {
      const error = this.#finalError(thrown, call, attempts, clock.now() - started);
      const recovered = endpoint.recover?.(error);
      if (recovered !== undefined) return { data: recovered, response: responseOf(error) };
      throw error;
    }
  }

  /**
   * The result of an answer that came: validated and transformed. With `validation: 'warn'` or
   * `'off'` a malformed body can still break the transform (`42` for an object); that is a
   * {@link ResponseValidationError} like strict mode's, never a connection error (the answer came)
   * nor a bare `TypeError`, and it is never retried: it happens after the retry loop.
   */
  #usable<P, R, T, B extends BuiltRequest>(call: Call<P, R, T, B>, exchange: Exchange): T {
    const { endpoint, context } = call;
    const body = exchange.body === undefined && endpoint.allowEmpty ? null : exchange.body;
    const { validation } = this.#options;
    try {
      const data = validate(endpoint.schema, body, validation, context, this.logger, this.#secrets);
      return endpoint.transform ? endpoint.transform(data, call.built) : (data as unknown as T);
    } catch (error) {
      if (error instanceof BillingError) throw error;
      throw unusable(context, [], error, scrubValue(body, this.#secrets));
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
      // Capped here too, so a cooldown of the app's own making never locks the client out for years.
      await grant.release(clock.now(), retryAfterMs === undefined ? undefined : cooldownWindow(retryAfterMs));
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
      timeout <= MAX_TIMER_MS
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
          requestIdOf(cause.answer && plainHeaders(cause.answer.headers, this.#secrets)),
        );
      }
      if (signal?.aborted) throw new APIUserAbortError(context, { cause: signal.reason });
      if (timedOut) throw new APITimeoutError(context, timeout);
      throw new APIConnectionError(context, { cause: scrubCause(cause, this.#secrets) });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
    return classify(answer, call.endpoint.isResult, context, this.#secrets);
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

  #headers(hasBody: boolean, extra: Record<string, string> | undefined): Record<string, string> {
    if (!hasBody && !extra) return this.#baseHeaders;
    // Per-call headers override the defaults, never the credentials.
    const headers = { ...this.#defaultHeaders, ...lowerKeys(extra), ...this.#authHeaders };
    if (hasBody) headers['content-type'] = 'application/json';
    return headers;
  }
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

/**
 * The {@link ResponseValidationError} of an answer that came but cannot be used: `why` is the
 * expectation, or what broke on it (a `TypeError` of the transform, by its message only).
 */
function unusable(
  context: RequestContext,
  path: (string | number)[],
  why: unknown,
  body: unknown,
): ResponseValidationError {
  const message = typeof why === 'string' ? why : `unusable: ${(why as Error)?.message ?? String(why)}`;
  return new ResponseValidationError(context, [{ path, message, code: 'unusable' }], body);
}

/** The response info of a recovered error (an `APIError`: the only kind an endpoint recovers from). */
function responseOf(error: BillingError): APIResponseInfo {
  const { status = 0, headers = {} } = error as {
    status?: number | undefined;
    headers?: Record<string, string> | undefined;
  };
  return responseInfo(status, headers);
}
