import { BodyTooLarge } from '../../platform/engine.js';
import { untilSignal } from '../../util/signals.js';

/**
 * A body stream as UTF-8 text, stopping with {@link BodyTooLarge} as soon as it passes `limit`
 * bytes (counted on the decoded stream, so a small gzip body that inflates past the limit is caught
 * while it inflates). The one size-limited read of the SDK: responses, and webhook deliveries.
 *
 * When `signal` aborts, the reader itself is cancelled: that ends a read that is waiting on a
 * stalled body and tears its connection down, without relying on the abort reaching the fetch
 * engine through the signals ky combines (which was seen to miss under load).
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  signal?: AbortSignal,
): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const cancel = () => reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    const decoder = new TextDecoder();
    let text = '';
    let size = 0;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const { done, value } = await reader.read();
      // A cancelled reader reports `done`: that is an abort, not the end of the body.
      if (signal?.aborted) throw signal.reason;
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > limit) {
        cancel();
        throw new BodyTooLarge();
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
}

/** A response's body as text within `limit`; a declared `content-length` over it fails before reading. */
export async function readBody(response: Response, limit: number, signal: AbortSignal): Promise<string> {
  const answer = { status: response.status, headers: response.headers };
  if (Number(response.headers.get('content-length')) > limit) {
    response.body?.cancel().catch(() => {});
    throw new BodyTooLarge(answer);
  }
  try {
    return await readLimited(response.body, limit, signal);
  } catch (error) {
    throw error instanceof BodyTooLarge ? new BodyTooLarge(answer) : error;
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
