import type { Clock } from '../src/util/clock.js';

// A test clock for the holds' keepers (the gate's route hold, the AI meter's call holds): time
// moves when the test says, nothing sleeps.

/** A clock moved by `advanceTo`: each wait due on the way ends in order, its follow-up let run. */
export function steppedClock(start: number) {
  let now = start;
  const waits: { at: number; resolve: () => void }[] = [];
  const clock: Clock & { advanceTo(at: number): Promise<void>; readonly pending: number } = {
    now: () => now,
    sleep(ms, signal, onAbort) {
      if (signal?.aborted) return Promise.reject(onAbort());
      return new Promise<void>((resolve, reject) => {
        const wait = { at: now + ms, resolve };
        waits.push(wait);
        signal?.addEventListener(
          'abort',
          () => {
            waits.splice(waits.indexOf(wait), 1);
            reject(onAbort());
          },
          { once: true },
        );
      });
    },
    async advanceTo(at) {
      for (;;) {
        waits.sort((a, b) => a.at - b.at);
        const next = waits[0];
        if (!next || next.at > at) break;
        waits.shift();
        now = next.at;
        next.resolve();
        // The beat's extend (a memory store: promise callbacks only) runs before time moves on.
        for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      }
      now = at;
    },
    get pending() {
      return waits.length;
    },
  };
  return clock;
}
