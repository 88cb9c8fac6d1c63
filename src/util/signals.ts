/**
 * A signal that aborts when any of `signals` does. Through `AbortSignal.any` where the runtime has
 * it, which adds no listener to the sources: a caller's signal shared by many concurrent calls
 * (a batch, `Promise.all`) would otherwise collect a listener per call, and Node warns past ten.
 * Elsewhere (a polyfilled signal, an older runtime), a listener per source does the same job.
 */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  const native = (AbortSignal as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (native && signals.every((s) => s instanceof AbortSignal)) return native([...signals]);
  const both = new AbortController();
  for (const source of signals) {
    if (source.aborted) {
      both.abort(source.reason);
      break;
    }
    source.addEventListener('abort', () => both.abort(source.reason), { once: true });
  }
  return both.signal;
}

/**
 * `promise`, or a rejection with `onAbort()` as soon as `signal` aborts: the caller stops waiting,
 * the work behind `promise` goes on (it may be shared with other callers). No listener is left
 * behind once either settles.
 */
export function untilSignal<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => unknown): Promise<T> {
  if (signal.aborted) {
    // Nobody waits for it any more: its failure must not surface as an unhandled rejection.
    promise.catch(() => undefined);
    return Promise.reject(onAbort());
  }
  return new Promise((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}

/** Why `signal` aborted, as fetch reports it: its reason, or an `AbortError` when it gave none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
