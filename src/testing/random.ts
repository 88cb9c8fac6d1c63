/**
 * A reproducible source of numbers in [0, 1) for the mock's `random` option, so a fault soak with
 * `probability` < 1 makes the same choices on every run (mulberry32: tiny, fast and well spread,
 * which is all a test needs; not for anything secret).
 *
 * @example
 * const server = await startMockServer({ random: seededRandom(42) });
 */
export function seededRandom(seed: number): () => number {
  let state = Math.trunc(seed) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
