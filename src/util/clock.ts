import { MAX_TIMER_MS, unref } from './timers.js';

/**
 * What a sleep needs of what cancels it: an `AbortSignal` has it, as has the lighter
 * `Stop` switch (util/stop.ts).
 */
export interface Cancellation {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * Time as the retry loop sees it. Tests swap it (see {@link withTestClock}) to record the waits the
 * SDK schedules instead of sitting through them.
 */
export interface Clock {
  /** Milliseconds since the epoch: wall-clock time, for timestamps (it may step, after an NTP sync or a resumed VM). */
  now(): number;
  /**
   * Milliseconds on a monotonic clock (`performance.now()`): for deadlines, which a wall-clock
   * step must not move. Optional for a test clock, which then times deadlines on {@link now}
   * (see {@link monotonicNow}).
   */
  monotonic?(): number;
  /**
   * Resolves after `ms`; rejects with `onAbort()`'s error as soon as `signal` aborts. A
   * `background` wait (a keeper's beat, not a request's retry) never keeps the process alive.
   */
  sleep(
    ms: number,
    signal: Cancellation | undefined,
    onAbort: () => Error,
    background?: boolean,
  ): Promise<void>;
}

/**
 * The real clock: `Date.now`, `performance.now` and `setTimeout`. This is the SDK's one sleep: a wait longer than
 * {@link MAX_TIMER_MS} (about 24.8 days) is slept in chunks, because `setTimeout` fires a larger delay
 * after about 1 ms (a busy loop); `Infinity` waits until `signal` aborts. It stays cancellable.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep(ms, signal, onAbort, background) {
    if (signal?.aborted) return Promise.reject(onAbort());
    if (!(ms > 0)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      let left = ms;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const abort = () => {
        clearTimeout(timer);
        reject(onAbort());
      };
      const step = () => {
        if (left <= 0) {
          signal?.removeEventListener('abort', abort);
          resolve();
          return;
        }
        const chunk = Math.min(left, MAX_TIMER_MS);
        left -= chunk;
        timer = setTimeout(step, chunk);
        if (background) unref(timer);
      };
      signal?.addEventListener('abort', abort, { once: true });
      step();
    });
  },
};

/** `clock`'s monotonic time (see {@link Clock.monotonic}), or its wall-clock time when it has none. */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now();
}

/**
 * The test seam, and the only place it is read. The SDK's own tests replace the clock of a client,
 * an access cache, a usage tracker or credit holds by passing their options through
 * {@link withTestClock}; those four read it with {@link clockOf} (in `resolveOptions`,
 * `createAccessCache`, `resolveTrackerOptions` and `createCreditHolds`). The key is this module's own symbol, not a public option: `check()`
 * does not see it (it lists string keys only) and `withOptions` keeps it (a spread copies it).
 */
const TEST_CLOCK: unique symbol = Symbol('billing-sdk test clock');

/**
 * A copy of `options` whose client, access cache or tracker runs on `clock`. For the SDK's tests.
 *
 * @internal
 */
export function withTestClock<O extends object>(options: O, clock: Clock): O {
  return { ...options, [TEST_CLOCK]: clock };
}

/**
 * The clock `options` carry from {@link withTestClock}, else the real one.
 *
 * @internal
 */
export function clockOf(options: unknown): Clock {
  return (options as { [TEST_CLOCK]?: Clock } | null | undefined)?.[TEST_CLOCK] ?? realClock;
}

/**
 * Whether `options` went through {@link withTestClock}: lets a test helper add a default clock only
 * where the test gave none.
 *
 * @internal
 */
export function hasTestClock(options: object): boolean {
  return TEST_CLOCK in options;
}
