import type { KyInstance } from 'ky';
import { ENGINE_HINTS, type Engine } from './engine.js';
import type { FetchLike } from './options.js';

/** One HTTP exchange as the rest of core sees it: no ky type leaves this file. */
export interface WireRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** The attempt's signal: aborting it ends the exchange, the body read included, and frees its socket. */
  signal: AbortSignal;
  /** Largest body the SDK reads, in bytes after decoding. */
  maxBytes: number;
}

type KyModule = typeof import('ky');
let kyModule: Promise<KyModule> | undefined;

/**
 * The only code that calls ky. Its engine is the user's `fetch` when given; else the SDK's own
 * engine where there is one (Node: undici's dispatcher API, see default-engine.ts), which gets the
 * attempt's signal, body and size limit as hints; else the global fetch. Everything ky would
 * otherwise do on its own is switched to what the SDK's request path needs: no retry and no HTTP-error throwing (retries and statuses are the request
 * path's), no timeout of its own (the attempt's signal covers headers and body together), and no
 * redirect followed (a 3xx comes back as it is and becomes an error: following it would send the
 * API key and a debit to wherever the `Location` points).
 *
 * ky is imported on the first request, not at import time: its module start-up builds a `Request`
 * to probe for stream support, which makes Node load its whole fetch implementation while the
 * application is still starting.
 */
export class Transport {
  readonly #fetch: FetchLike | undefined;
  readonly #engine: Engine | undefined;
  #ky: KyInstance | undefined;

  constructor(fetch: FetchLike | undefined, engine: Engine | undefined) {
    this.#fetch = fetch;
    this.#engine = fetch ? undefined : engine;
  }

  /**
   * Sends the request and resolves with the response, whose body the caller reads with `readBody`
   * (the SDK's engine has read it already, within the same limit: see engine.ts).
   */
  async send(request: WireRequest): Promise<Response> {
    const ky = this.#ky ?? (await this.#create());
    const { method, url, headers, body, signal, maxBytes } = request;
    if (!this.#engine) return ky(url, { method, headers, body, signal });
    // ky passes options it does not know on to its fetch: the engine's hints travel that way. The
    // signal goes to the engine only: given to ky too, it would cost an `AbortSignal.any` and a
    // signal for the Request to follow on every call, for an abort the engine already acts on.
    const withHints = { method, headers, body, [ENGINE_HINTS]: { body, signal, maxBytes } };
    return ky(url, withHints);
  }

  async #create(): Promise<KyInstance> {
    kyModule ??= import('ky');
    const { default: ky } = await kyModule;
    this.#ky = ky.create({
      retry: 0,
      throwHttpErrors: false,
      timeout: false,
      redirect: 'manual',
      ...(this.#fetch || this.#engine
        ? { fetch: (this.#fetch ?? this.#engine) as typeof globalThis.fetch }
        : {}),
    });
    return this.#ky;
  }
}
