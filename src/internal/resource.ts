import { APIPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import type { PageEnvelope, PagePromise } from '../core/pagination.js';
import type { BuiltRequest, Endpoint } from './endpoint.js';
import type { ApiCore } from './request.js';

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

  /**
   * Sends one call; the promise also offers `.withResponse()`.
   *
   * @internal
   */
  protected _call<P, R, T, B extends BuiltRequest>(
    endpoint: Endpoint<P, R, T, B>,
    params: P,
    options: RequestOptions | undefined,
  ): APIPromise<T> {
    return new APIPromise(this.#core.call(endpoint, params, options));
  }

  /**
   * A paginated list: nothing is sent until it is awaited or iterated.
   *
   * @internal
   */
  protected _list<P, T, B extends BuiltRequest>(
    endpoint: Endpoint<P, PageEnvelope<T>, PageEnvelope<T>, B>,
    params: P,
    options: RequestOptions | undefined,
  ): PagePromise<T> {
    return this.#core.list(endpoint, params, options);
  }
}
