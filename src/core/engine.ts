/**
 * What the SDK's own fetch engine (Node: undici's dispatcher API) needs beyond the `Request` ky
 * builds. ky hands every option it does not know to its `fetch` as the second argument (as it does
 * for Next.js's `next`), so the transport passes these under {@link ENGINE_HINTS}. A user's own
 * `fetch` never receives them.
 */
export interface EngineHints {
  /**
   * The body as the SDK built it: sent as it is, instead of reading back the stream the Request
   * made of it.
   */
  body: string | undefined;
  /**
   * The attempt's own signal. The Request's signal only follows it through ky's combined signal,
   * and a Request's signal stops following once the Request is garbage-collected.
   */
  signal: AbortSignal;
  /** Largest body read, in bytes after decoding; past it the engine stops with `BodyTooLarge`. */
  maxBytes: number;
}

/** The option name the hints travel under. */
export const ENGINE_HINTS = 'billingSdkEngine';

/**
 * A fetch engine: `fetch`'s signature, plus the hints. Its answers' bodies are read (within
 * `maxBytes`) before it resolves, and stored in {@link readByEngine}.
 */
export type Engine = (input: Request, init?: { [ENGINE_HINTS]?: EngineHints }) => Promise<Response>;

/**
 * Bodies the engine has already read, by the Response it resolved with (whose own body is then
 * empty). The engine reads while it waits, so the text is there when ky hands the Response on; this
 * spares a stream per response, which is most of what Node's fetch costs per request.
 */
export const readByEngine = new WeakMap<Response, string>();
