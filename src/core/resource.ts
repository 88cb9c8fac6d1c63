import { APIPromise } from './api-promise.js';
import type { RequestOptions } from './options.js';
import type { PageEnvelope, PagePromise } from './pagination.js';
import type { ApiCore, Endpoint } from './request.js';

/**
 * Declares an endpoint: `R` is the response body's type (from the schema), `T` the method's result
 * (from `transform`, else `R`). Resources declare one per method at module
 * level: checks, path, schema and retry safety live there, and the method only names it.
 */
export function endpoint<R, T = R>(spec: Endpoint<T, R>): Endpoint<T, R> {
  return spec;
}

/**
 * Base of every resource namespace (`billing.invoices`, …): a method is one line that hands its
 * endpoint, parameters and options to the request path.
 */
export abstract class APIResource {
  readonly #core: ApiCore;

  /** @internal Built by {@link BillingClient}. */
  constructor(core: ApiCore) {
    this.#core = core;
  }

  /** Sends one call; the promise also offers `.withResponse()`. */
  protected _call<T, R>(
    endpoint: Endpoint<T, R>,
    params: unknown,
    options: RequestOptions | undefined,
  ): APIPromise<T> {
    return new APIPromise(this.#core.call(endpoint, params, options));
  }

  /** A paginated list: nothing is sent until it is awaited or iterated. */
  protected _list<T>(
    endpoint: Endpoint<PageEnvelope<T>>,
    params: unknown,
    options: RequestOptions | undefined,
  ): PagePromise<T> {
    return this.#core.list(endpoint, params, options);
  }
}
