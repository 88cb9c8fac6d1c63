import { plainHeaders, requestIdOf } from '../util/redact.js';

/** The HTTP response behind a result, from `.withResponse()`. */
export interface APIResponseInfo {
  /** HTTP status code. */
  status: number;
  /** Response headers, lower-cased, with cookies removed. */
  headers: Record<string, string>;
  /** The server's id for this request (`x-request-id` or `request-id`), to quote when you report a problem. */
  requestId: string | undefined;
}

/** What `.withResponse()` resolves with: the method's result and the response it came from. */
export interface WithResponse<T> {
  /** What awaiting the call gives. */
  data: T;
  /** Status, headers and request id of the (last) response. */
  response: APIResponseInfo;
}

/** Builds the response info once, from a response's status and headers. */
export function responseInfo(status: number, headers: Headers | Record<string, string>): APIResponseInfo {
  const plain = plainHeaders(headers);
  return { status, headers: plain, requestId: requestIdOf(plain) };
}

/**
 * The promise every method returns: `await` it for the result, or call `.withResponse()` for the
 * result and the HTTP response together (status, headers, request id). The request is already on
 * its way when the method returns.
 *
 * @example
 * ```ts
 * const { data, response } = await billing.usage.balance(params).withResponse();
 * console.log(data.balance, response.requestId);
 * ```
 */
export class APIPromise<T> extends Promise<T> {
  readonly #answer: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  /** @internal Built by the SDK's methods. */
  constructor(answer: Promise<WithResponse<T>>) {
    // The base promise is never used: then/catch/finally read `answer` instead.
    super((resolve) => resolve(undefined as T));
    this.#answer = answer;
  }

  /** `then` and friends build plain promises, not APIPromises (which need an answer to wrap). */
  static override get [Symbol.species]() {
    return Promise;
  }

  /** The result together with the HTTP response it came from. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#answer.then((answer) => answer);
  }

  #result(): Promise<T> {
    this.#data ??= this.#answer.then((answer) => answer.data);
    return this.#data;
  }

  // biome-ignore lint/suspicious/noThenProperty: an APIPromise is awaited like the promise of its result.
  override then<R1 = T, R2 = never>(
    onfulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#result().then(onfulfilled, onrejected);
  }

  override catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.#result().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#result().finally(onfinally);
  }
}
