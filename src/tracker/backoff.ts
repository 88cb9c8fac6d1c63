/** The tracker's first wait after a transient failure, in ms (before jitter). */
export const TRACKER_BACKOFF_BASE_MS = 500;
/** The longest the tracker's own backoff grows, in ms (before jitter); a server's Retry-After may ask for more. */
export const TRACKER_BACKOFF_CAP_MS = 30_000;
/**
 * The longest wait a server's Retry-After gets from the tracker, in ms: one hour. A longer one (a
 * hostile or broken answer asking for ten years) is waited an hour at a time, one probe each,
 * rather than stopping the tracker for good.
 */
export const TRACKER_RETRY_AFTER_CAP_MS = 3_600_000;

/**
 * How long the usage tracker waits before it sends again, after `failures` transient failures in a
 * row (1 for the first): exponential from 0.5 s, doubling up to 30 s, each wait 50-100 % of that so
 * that many processes coming back from one outage do not hit the service in step. Never less than
 * the server asked (`retryAfterMs`, from a 429 or 503 with Retry-After) up to an hour
 * ({@link TRACKER_RETRY_AFTER_CAP_MS}): the tracker has no caller waiting on it, so it can afford
 * to honour the server, but no single answer stops it for longer. The wait is slept by the SDK's
 * one sleep (`Clock.sleep`), whatever its length: never a timer that overflows into a busy loop.
 *
 * A pure function (the randomness comes in as `random`), so it is tested as a table.
 *
 * @param failures - Consecutive transient failures so far, counting the one that just happened.
 * @param retryAfterMs - What the server asked for, when it did.
 * @param random - A number in [0, 1) for the jitter.
 */
export function trackerBackoff(
  failures: number,
  retryAfterMs: number | undefined = undefined,
  random: () => number = Math.random,
): number {
  // Clamped before the power (2 ** 1e6 is Infinity); anything below 1, NaN included, is a first failure.
  const exponent = failures >= 1 ? Math.min(Math.floor(failures), 31) - 1 : 0;
  const ceiling = Math.min(TRACKER_BACKOFF_CAP_MS, TRACKER_BACKOFF_BASE_MS * 2 ** exponent);
  const wait = Math.round(ceiling * (0.5 + 0.5 * random()));
  if (!(retryAfterMs !== undefined && retryAfterMs > wait)) return wait;
  return Math.min(Math.ceil(retryAfterMs), TRACKER_RETRY_AFTER_CAP_MS);
}
