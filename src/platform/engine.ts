/**
 * One answer, its body read whole (within the size limit): what {@link Transport.send} resolves
 * with on every engine, so the request path never sees a `Response` or a stream.
 */
export interface WireResponse {
  /** HTTP status; 0 for an opaque redirect (a browser's `redirect: 'manual'`). */
  status: number;
  headers: Headers;
  /** The body decoded as UTF-8 ('' when empty). */
  text: string;
}

/** What one attempt gives the engine besides the `Request` ky built. */
export interface AttemptIO {
  /** The body as the SDK built it: sent as it is, instead of reading back the Request's stream. */
  body: string | undefined;
  /**
   * The attempt's own signal: aborting it ends the exchange, body read included, and frees its
   * socket. (A Request's signal only follows it through the signals ky combines, and stops
   * following once the Request is garbage-collected.)
   */
  signal: AbortSignal;
  /** Largest body read, in bytes after decoding; past it the engine rejects with `BodyTooLarge`. */
  maxBytes: number;
}

/**
 * The SDK's own fetch engine (in Node, undici's dispatcher API): sends ky's `Request` and reads the
 * whole body while it waits. It rejects as fetch does (`TypeError('fetch failed', { cause })`, the
 * signal's reason for an abort), so one classifier serves every engine.
 */
export type Engine = (request: Request, io: AttemptIO) => Promise<WireResponse>;

/**
 * The body was larger than the limit; reading stopped there. Carries the answer's status and
 * headers when they are known, for the error the caller builds.
 */
export class BodyTooLarge extends Error {
  constructor(readonly answer?: { status: number; headers: Headers }) {
    super('response body larger than the limit');
  }
}
