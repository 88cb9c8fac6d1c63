/** The first wait before a dropped stream is opened again, in ms. */
const FIRST_MS = 500;
/** The longest wait, in ms: a page left open through an outage asks twice a minute. */
const MAX_MS = 30_000;

/**
 * How long to wait before the `attempt`th reconnect (0 for the first), in ms: doubling from 500 ms
 * up to 30 s, with "equal jitter" (half fixed, half `random` in [0, 1)) so that the tabs of a
 * restarted server do not all come back in the same millisecond.
 */
export function backoffMs(attempt: number, random: number): number {
  const ceiling = Math.min(MAX_MS, FIRST_MS * 2 ** Math.min(attempt, 16));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}
