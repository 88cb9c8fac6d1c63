// The actions of the credit-holds workload, from a seed: the process tests of every hold store
// (test/credits/workload.ts) and the bench's contrast with debiting after (bench/holds.mjs) run the
// same plans. Plain JS, so the bench (which runs without a TypeScript loader) imports it too.

/** xorshift32 from a seed: numbers in [0, 1), the same from the same seed. */
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** `count` actions: each reserves 1–`maxQuantity`, "runs" 5–40 ms, then uses `useShare` of what it reserved. */
export function holdPlans(count, maxQuantity, seed) {
  const next = random(seed);
  const pick = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  return Array.from({ length: count }, () => {
    const quantity = pick(1, maxQuantity);
    return { quantity, useShare: next(), runMs: pick(5, 40) };
  });
}

/** What a plan uses of its reservation: an integer from 0 to `quantity`. */
export const usedOf = ({ quantity, useShare }) => Math.floor(useShare * (quantity + 1));
