import { attempt } from './attempt.js';
import type { RequestContext } from './errors.js';
import { createLogger, type SdkLogger } from './logger.js';
import type { RequestOptions, ResolvedOptions } from './options.js';
import { loadFirstPage, type PageEnvelope, PagePromise } from './pagination.js';
import { withRetries } from './retry.js';
import type { Schema } from './schema.js';
import { Transport } from './transport.js';
import { type QueryParams, queryString } from './url.js';
import { validate } from './validation.js';

/** Everything a resource method says about one endpoint call. */
export interface RequestSpec<T> {
  /** SDK method name for messages, e.g. `invoices.list`. */
  operation: string;
  method: 'GET' | 'POST';
  /** Path relative to the base URL, already encoded (see `path`), e.g. `invoices/`. */
  path: string;
  query?: QueryParams | undefined;
  /** JSON body. */
  body?: unknown;
  /** Schema of the response body. */
  schema: Schema<T>;
  /** A POST that is safe to send twice (its body carries an idempotency key): retried like a GET. */
  idempotent?: boolean;
  /** An empty 2xx body is an answer: it is validated as `null`. */
  allowEmpty?: boolean;
  /** A non-2xx response whose body is a result (a refusal), not an error. */
  isResult?: (status: number, body: unknown) => boolean;
}

/** Parameters of a list call once its checks passed. */
export interface ListRequest {
  path: string;
  query: QueryParams & { page?: number | undefined; page_size?: number | undefined };
}

/** A list endpoint: `prepare` runs the call's checks and returns path and query, on first use. */
export interface ListSpec<T> {
  operation: string;
  schema: Schema<PageEnvelope<T>>;
  prepare: () => ListRequest;
}

/**
 * The one request path of the SDK: headers, URL, retries, one attempt each, body parsed once,
 * validation. Knows nothing about billing resources. Holds the API key in a private field so it
 * never shows up when a client is logged or inspected.
 */
export class ApiCore {
  /** Options after defaults; the key itself lives only in `#authHeaders`. */
  readonly #options: Omit<ResolvedOptions, 'apiKey'>;
  readonly #transport: Transport;
  /** Default headers then auth: what a call without its own headers sends, built once. */
  readonly #baseHeaders: Record<string, string>;
  readonly #defaultHeaders: Record<string, string>;
  readonly #authHeaders: Record<string, string>;
  /** Logger that scrubs the API key from every line. */
  readonly logger: SdkLogger;

  constructor(options: ResolvedOptions) {
    const { apiKey, ...rest } = options;
    this.#options = rest;
    this.#transport = new Transport(options.fetch);
    this.logger = createLogger(options.logger, options.logLevel, [apiKey]);
    this.#authHeaders =
      options.authHeader === 'x-api-key' ? { 'x-api-key': apiKey } : { authorization: `Bearer ${apiKey}` };
    this.#defaultHeaders = { accept: 'application/json', ...lowerKeys(options.headers) };
    this.#baseHeaders = { ...this.#defaultHeaders, ...this.#authHeaders };
  }

  /** Sends `spec`, retrying as its method allows, and returns the validated body. */
  async request<T>(spec: RequestSpec<T>, options: RequestOptions = {}): Promise<T> {
    const o = this.#options;
    const context: RequestContext = {
      operation: spec.operation,
      method: spec.method,
      path: o.basePath + spec.path,
    };
    const wire = {
      method: spec.method,
      url: o.baseUrl + spec.path + queryString(spec.query),
      headers: this.#headers(spec.body !== undefined, options.headers),
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
    };
    const attemptSpec = {
      request: context,
      timeout: options.timeout ?? o.timeout,
      signal: options.signal,
      isResult: spec.isResult,
    };
    const started = this.logger.enabled('debug') ? Date.now() : 0;
    const result = await withRetries(() => attempt(this.#transport, wire, attemptSpec), {
      maxRetries: options.maxRetries ?? o.maxRetries,
      maxRetryDelay: o.maxRetryDelay,
      idempotent: spec.method === 'GET' || spec.idempotent === true,
      signal: options.signal,
      request: context,
      logger: this.logger,
    });
    if (started) {
      this.logger.log(
        'debug',
        `${context.method} ${context.path} → ${result.status} in ${Date.now() - started} ms`,
      );
    }
    const body = result.body === undefined && spec.allowEmpty ? null : result.body;
    return validate(spec.schema, body, o.validation, context, this.logger);
  }

  /**
   * Builds the spec (running the method's checks) and sends it. Checks throw inside this async
   * function, so bad input rejects the returned promise and nothing is sent.
   */
  async call<T>(options: RequestOptions | undefined, build: () => RequestSpec<T>): Promise<T> {
    return this.request(build(), options);
  }

  /**
   * A paginated GET. Checks run when the list is first awaited or iterated, so a bad parameter
   * rejects the promise (nothing is sent) instead of throwing where the list was created.
   */
  list<T>(spec: ListSpec<T>, options?: RequestOptions): PagePromise<T> {
    return new PagePromise(() => {
      const { path, query } = spec.prepare();
      const { operation, schema } = spec;
      const start = query.page ?? 1;
      // `page` goes on the wire only when it was asked for or is past the first: products takes no page parameter.
      const load = (page: number) =>
        this.request(
          {
            operation,
            schema,
            path,
            method: 'GET',
            query: { ...query, page: page === 1 ? query.page : page },
          },
          options,
        );
      return loadFirstPage(load, start, query.page_size ?? 20);
    });
  }

  #headers(hasBody: boolean, extra: Record<string, string> | undefined): Record<string, string> {
    if (!hasBody && !extra) return this.#baseHeaders;
    // Per-call headers override the defaults, never the credentials.
    const headers = { ...this.#defaultHeaders, ...lowerKeys(extra), ...this.#authHeaders };
    if (hasBody) headers['content-type'] = 'application/json';
    return headers;
  }
}

function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers) for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}
