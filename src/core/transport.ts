import ky, { type KyInstance } from 'ky';
import type { FetchLike } from './options.js';

/** One HTTP exchange as the rest of core sees it: no ky type leaves this file. */
export interface WireRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/** The response with its body read exactly once, as text. */
export interface WireResponse {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * The only code that calls ky. ky's retry, timeout and HTTP-error throwing are off: retries and
 * timeouts live in one place (retry.ts, attempt.ts) and every status is mapped by error-map.ts.
 */
export class Transport {
  readonly #ky: KyInstance;

  constructor(fetch: FetchLike | undefined) {
    this.#ky = ky.create({
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      ...(fetch ? { fetch: fetch as typeof globalThis.fetch } : {}),
    });
  }

  /** Sends the request and reads the whole body (under the same signal, so a timeout covers it). */
  async send(request: WireRequest): Promise<WireResponse> {
    const response = await this.#ky(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
    });
    // text() then JSON.parse: ky's .json() would clone the response and read it twice.
    const text = await response.text();
    return { status: response.status, headers: response.headers, text };
  }
}
