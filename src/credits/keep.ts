import { holdClock } from './hold.js';
import type { CreditHold } from './types.js';

/**
 * Keeps `hold` held while its action runs: extends it every third of its ttl until `signal`
 * aborts, the hold is no longer held, or `alive()` answers false at a beat (the action was left:
 * the hold then ends with its ttl). A store that fails is tried again at the next beat (two beats
 * remain before the hold would lapse). The wait is a background one: it never keeps the process
 * alive. Never rejects.
 */
export async function keepHold(
  hold: CreditHold,
  signal: AbortSignal,
  alive: () => boolean = () => true,
): Promise<void> {
  const { ttlMs } = hold;
  // Holds of another implementation of CreditHolds: without extend, nothing to keep.
  if (typeof hold.extend !== 'function' || !(ttlMs >= 1)) return;
  const clock = holdClock(hold);
  const every = Math.max(1, Math.floor(ttlMs / 3));
  const stopped = () => new Error('closed');
  try {
    for (;;) {
      await clock.sleep(every, signal, stopped, true);
      if (!alive()) return;
      const r = await hold.extend().catch(() => undefined);
      if (r?.extended === false || signal.aborted) return;
    }
  } catch {
    // Stopped while waiting: nothing more to keep.
  }
}
