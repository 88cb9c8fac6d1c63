import { abortReason } from '../util/signals.js';

/**
 * Responses whose body must be written as it comes rather than buffered: the node adapter
 * otherwise reads a body to the end to send its length, and a stalled body has no end.
 */
const streamed = new WeakSet<Response>();

/** True for a response the transport must stream (see {@link stalledResponse}). */
export function isStreamed(response: Response): boolean {
  return streamed.has(response);
}

/**
 * An answer that sends its head and the first half of `body`, then nothing, and never ends. It
 * errors when `signal` aborts (the client went away, or in process the caller's fetch signal), so
 * neither side is left holding a reader that can never settle.
 */
export function stalledResponse(
  body: Uint8Array<ArrayBuffer>,
  init: ResponseInit,
  signal: AbortSignal,
): Response {
  const prefix = body.subarray(0, Math.floor(body.length / 2));
  let onAbort: (() => void) | undefined;
  const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
    start(controller) {
      if (prefix.length > 0) controller.enqueue(prefix);
      onAbort = () => controller.error(abortReason(signal));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    },
    cancel() {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    },
  });
  const headers = new Headers(init.headers);
  // Chunked: a length would let the client see at once that the body can never complete.
  headers.delete('content-length');
  const response = new Response(stream, { ...init, headers });
  streamed.add(response);
  return response;
}
