import type { KyInstance } from 'ky';
import type { FetchLike } from './options.js';

/** One HTTP exchange as the rest of core sees it: no ky type leaves this file. */
export interface WireRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** The caller's signal, if any. */
  signal?: AbortSignal | undefined;
  /** Milliseconds until the response headers must have arrived. */
  timeout: number;
}

/** The response head; attempt.ts reads the body once, under the attempt's deadline. */
export interface WireResponse {
  status: number;
  headers: Headers;
  /** Reads the whole body as text (once). */
  text(): Promise<string>;
}

/** ky's own timeout fired: the rest of core only sees this marker, never a ky type. */
export class WireTimeout extends Error {}

type KyModule = typeof import('ky');
const MAX_TIMER = 2_147_483_647;
let kyModule: Promise<KyModule> | undefined;

/**
 * The only code that calls ky. ky's retry and HTTP-error throwing are off (retries live in
 * retry.ts, statuses are mapped by error-map.ts); its timeout bounds the wait for headers.
 *
 * ky is imported on the first request, not at import time: its module start-up builds a `Request`
 * to probe for stream support, which makes Node load its whole fetch implementation while the
 * application is still starting. Every client pays that once on its first request anyway.
 */
export class Transport {
  readonly #fetch: FetchLike | undefined;
  #ky: KyInstance | undefined;
  #isTimeout: ((error: unknown) => boolean) | undefined;

  constructor(fetch: FetchLike | undefined) {
    this.#fetch = fetch;
  }

  /** Sends the request and resolves with the response head. */
  async send(request: WireRequest): Promise<WireResponse> {
    const ky = this.#ky ?? (await this.#create());
    try {
      return await ky(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
        // ky refuses timeouts beyond what setTimeout can hold; such a bound means "none".
        timeout: request.timeout > MAX_TIMER ? false : request.timeout,
      });
    } catch (error) {
      throw this.#isTimeout?.(error) ? new WireTimeout('timeout', { cause: error }) : error;
    }
  }

  async #create(): Promise<KyInstance> {
    kyModule ??= import('ky');
    const { default: ky, isTimeoutError } = await kyModule;
    this.#isTimeout = isTimeoutError;
    this.#ky = ky.create({
      retry: 0,
      throwHttpErrors: false,
      ...(this.#fetch ? { fetch: this.#fetch as typeof globalThis.fetch } : {}),
    });
    return this.#ky;
  }
}
