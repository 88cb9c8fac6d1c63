import type { KyInstance } from 'ky';
import type { FetchLike } from '../../core/options.js';
import type { Engine, WireResponse } from '../../platform/engine.js';
import { untilSignal } from '../../util/signals.js';
import { readBody, untilAborted } from './read-body.js';

/** One HTTP exchange as the rest of core sees it: no ky type leaves this folder. */
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
 * The only code that calls ky, and the boundary of this folder: {@link send} takes a request and
 * resolves with its status, headers and whole body, read within the size limit and the attempt's
 * signal, whichever engine runs under ky. The engine is the user's `fetch` when given; else the
 * SDK's own where there is one (Node: undici's dispatcher API, see default-engine.ts); else the
 * global fetch. Everything ky would otherwise do on its own is switched to what the request path
 * needs: no retry and no HTTP-error throwing (retries and statuses are the request path's), no
 * timeout of its own (the attempt's signal covers headers and body together), and no redirect
 * followed (a 3xx comes back as it is and becomes an error: following it would send the API key
 * and a debit to wherever the `Location` points).
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

  /** Sends the request and reads its answer whole. Rejects as fetch does, or with `BodyTooLarge`. */
  async send(request: WireRequest): Promise<WireResponse> {
    const ky = this.#ky ?? (await this.#create());
    const { method, url, headers, body, signal, maxBytes } = request;
    const engine = this.#engine;
    if (engine) {
      // ky's own `fetch` option, per call: the engine gets the attempt's body, signal and limit
      // in this closure, and hands the text it read back the same way. ky gets no signal: it would
      // cost an `AbortSignal.any` and a signal for the Request on every call, for an abort the
      // engine already acts on.
      let answer: WireResponse = { status: 0, headers: new Headers(), text: '' };
      const fetch = async (input: Request): Promise<Response> => {
        answer = await engine(input, { body, signal, maxBytes });
        return new Response(null, { status: answer.status, headers: answer.headers });
      };
      await untilSignal(
        ky(url, { method, headers, body, fetch: fetch as typeof globalThis.fetch }),
        signal,
        () => signal.reason,
      );
      return answer;
    }
    const response = await untilAborted(ky(url, { method, headers, body, signal }), signal);
    return {
      status: response.type === 'opaqueredirect' ? 0 : response.status,
      headers: response.headers,
      text: await readBody(response, maxBytes, signal),
    };
  }

  async #create(): Promise<KyInstance> {
    kyModule ??= import('ky');
    const { default: ky } = await kyModule;
    this.#ky = ky.create({
      retry: 0,
      throwHttpErrors: false,
      timeout: false,
      redirect: 'manual',
      ...(this.#fetch ? { fetch: this.#fetch as typeof globalThis.fetch } : {}),
    });
    return this.#ky;
  }
}
