import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TRACKER_BACKOFF_CAP_MS, trackerBackoff } from '../../src/tracker/backoff.js';

const low = () => 0;
const high = () => 1;
const mid = () => 0.5;

describe('trackerBackoff', () => {
  // failures, Retry-After (ms), random → wait (ms)
  it.each([
    // Doubling from 0.5 s, each wait 50-100 % of its ceiling.
    [1, undefined, low, 250],
    [1, undefined, high, 500],
    [1, undefined, mid, 375],
    [2, undefined, low, 500],
    [2, undefined, high, 1_000],
    [3, undefined, high, 2_000],
    [4, undefined, high, 4_000],
    [5, undefined, high, 8_000],
    [6, undefined, high, 16_000],
    // Capped at 30 s (32 s would be next).
    [7, undefined, high, 30_000],
    [7, undefined, low, 15_000],
    [8, undefined, high, 30_000],
    [1_000, undefined, high, 30_000],
    [Number.POSITIVE_INFINITY, undefined, high, 30_000],
    // Anything that is not a count of at least one failure is a first failure.
    [0, undefined, high, 500],
    [-3, undefined, high, 500],
    [Number.NaN, undefined, high, 500],
    [2.7, undefined, high, 1_000],
    // The server's Retry-After, when longer, wins; never shorter than the backoff.
    [1, 5_000, low, 5_000],
    [1, 100, high, 500],
    [3, 0, low, 1_000],
    [7, 120_000, high, 120_000],
    [1, 1_234.5, low, 1_235],
    // Up to an hour: a Retry-After of 30 days (or any length) is waited an hour at a time.
    [1, 3_600_000, low, 3_600_000],
    [1, 2_592_000_000, low, 3_600_000],
    [9, Number.POSITIVE_INFINITY, high, 3_600_000],
  ] as const)(
    'after %s failure(s), Retry-After %s, random %o → %s ms',
    (failures, retryAfterMs, random, expected) => {
      expect(trackerBackoff(failures, retryAfterMs, random)).toBe(expected);
    },
  );

  it('always waits between half and all of its ceiling, and the ceiling never shrinks', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const ceiling = Math.min(TRACKER_BACKOFF_CAP_MS, 500 * 2 ** (n - 1));
        const wait = trackerBackoff(n, undefined, () => r);
        expect(wait).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(wait).toBeLessThanOrEqual(ceiling);
        expect(trackerBackoff(n + 1, undefined, () => 1)).toBeGreaterThanOrEqual(
          trackerBackoff(n, undefined, () => 1),
        );
      }),
    );
  });
});
