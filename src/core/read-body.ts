import { readByEngine } from './engine.js';
import { untilSignal } from './signals.js';

/**
 * The body was larger than the limit; reading stopped there. An engine that reads bodies before it
 * resolves (engine.ts) says which answer it was, since no Response reached the request path.
 */
export class BodyTooLarge extends Error {
  constructor(readonly answer?: { status: number; headers: Headers }) {
    super('response body larger than the limit');
  }
}

/**
 * Reads a response body as text, stopping with {@link BodyTooLarge} as soon as it passes `limit`
 * bytes. Counted on the decoded stream, so a small gzip body that inflates past the limit is caught
 * while it inflates, not after. A declared `content-length` over the limit fails before reading.
 *
 * When `signal` aborts, the reader itself is cancelled: that ends a read that is waiting on a
 * stalled body and tears its connection down, without relying on the abort reaching the fetch
 * engine through the signals ky combines (which was seen to miss under load).
 */
export async function readBody(response: Response, limit: number, signal: AbortSignal): Promise<string> {
  // The SDK's engine has read it already, within the same limit and signal.
  const read = readByEngine.get(response);
  if (read !== undefined) return read;
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) {
    response.body?.cancel().catch(() => {});
    throw new BodyTooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const cancel = () => reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const decoder = new TextDecoder();
    let text = '';
    let size = 0;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const { done, value } = await reader.read();
      // A cancelled reader reports `done`: that is an abort, not the end of the body.
      if (signal.aborted) throw signal.reason;
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > limit) {
        cancel();
        throw new BodyTooLarge();
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/**
 * `sending`, or a rejection with the signal's reason as soon as it aborts. A response that still
 * arrives after that has its body cancelled, so its connection is not left open.
 */
export function untilAborted(sending: Promise<Response>, signal: AbortSignal): Promise<Response> {
  return untilSignal(sending, signal, () => {
    sending.then(
      (r) => r.body?.cancel(),
      () => {},
    );
    return signal.reason;
  });
}
