/**
 * Time as the retry loop sees it. Tests swap it (see {@link CLOCK}) to record the waits the SDK
 * schedules instead of sitting through them.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with `onAbort()`'s error as soon as `signal` aborts. */
  sleep(ms: number, signal: AbortSignal | undefined, onAbort: () => Error): Promise<void>;
}

/** The real clock: `Date.now` and `setTimeout`. */
export const realClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal, onAbort) {
    if (signal?.aborted) return Promise.reject(onAbort());
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const abort = () => {
        clearTimeout(timer);
        reject(onAbort());
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', abort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', abort, { once: true });
    });
  },
};

/**
 * Key of a client option that replaces the clock. A symbol rather than a named option: it exists
 * for the SDK's own tests and is not part of the public options type.
 *
 * @internal
 */
export const CLOCK: unique symbol = Symbol.for('billing-sdk.clock');
