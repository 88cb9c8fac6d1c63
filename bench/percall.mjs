// Per-call timing shared by the access and tracker modes: in a child, a fast call against a slow one
// in alternating blocks, every call timed on its own (comparePerCall); in the parent, the ratio over
// children and its table (summarizePerCall, perCallTable). Also the seeded PRNG and the steady-rate
// driver the simulations use.
import { fmtInt, fmtNum, mdTable, median, stats } from './report.mjs';

export const ns = () => process.hrtime.bigint();

/** A duration in ns, as µs below 1 ms, else as ms. @param {number} x */
export const fmtNs = (x) =>
  !Number.isFinite(x) ? '–' : x < 1e6 ? `${fmtNum(x / 1000, 2)} µs` : `${fmtNum(x / 1e6, 1)} ms`;

/**
 * Mean, p50, p99, p99.9 and max of the first `n` values (ns).
 * @param {Float64Array} xs
 * @param {number} [n]
 */
export function distribution(xs, n = xs.length) {
  if (n === 0)
    return { n, mean: Number.NaN, p50: Number.NaN, p99: Number.NaN, p999: Number.NaN, max: Number.NaN };
  const sorted = xs.slice(0, n).sort();
  const at = (q) => sorted[Math.min(n - 1, Math.floor(q * n))];
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  return { n, mean: sum / n, p50: at(0.5), p99: at(0.99), p999: at(0.999), max: sorted[n - 1] };
}

/** `calls` awaited calls of `fn`, each timed, written into `into` from `at`. @param {Float64Array} into */
export async function timedCalls(fn, calls, into, at = 0) {
  for (let i = 0; i < calls; i++) {
    const t0 = ns();
    await fn();
    into[at + i] = Number(ns() - t0);
  }
}

/**
 * A slow call against a fast one in one process: warm-up of both in turn for `warmupMs`, then
 * `blocks` alternating blocks (`slowCalls` slow calls, then `fastCalls` fast ones), every call awaited
 * and timed on its own with process.hrtime.bigint(); `between()` (untimed) after each block pair and
 * each warm-up round. Also the timer's own cost (two back-to-back hrtime.bigint()).
 * @param {object} o
 * @param {() => Promise<unknown>} o.slow
 * @param {() => Promise<unknown>} o.fast
 * @param {number} o.blocks
 * @param {number} o.slowCalls  per block
 * @param {number} o.fastCalls  per block
 * @param {number} o.warmupMs
 * @param {() => Promise<void>} [o.between]
 */
export async function comparePerCall(o) {
  const between = o.between ?? (async () => {});
  const overhead = new Float64Array(100_000);
  for (let i = 0; i < overhead.length; i++) {
    const t0 = ns();
    overhead[i] = Number(ns() - t0);
  }
  const scratch = new Float64Array(Math.max(o.slowCalls, o.fastCalls));
  const warmUntil = performance.now() + o.warmupMs;
  while (performance.now() < warmUntil) {
    await timedCalls(o.slow, Math.ceil(o.slowCalls / 5), scratch);
    await timedCalls(o.fast, Math.ceil(o.fastCalls / 5), scratch);
    await between();
  }
  const slow = new Float64Array(o.blocks * o.slowCalls);
  const fast = new Float64Array(o.blocks * o.fastCalls);
  const mean = (xs, from, n) => xs.subarray(from, from + n).reduce((a, b) => a + b, 0) / n;
  /** Per block pair, slow mean ÷ fast mean: two neighbouring stretches of the machine. */
  const blockRatios = [];
  for (let b = 0; b < o.blocks; b++) {
    await timedCalls(o.slow, o.slowCalls, slow, b * o.slowCalls);
    await timedCalls(o.fast, o.fastCalls, fast, b * o.fastCalls);
    blockRatios.push(mean(slow, b * o.slowCalls, o.slowCalls) / mean(fast, b * o.fastCalls, o.fastCalls));
    await between();
  }
  return {
    slow: distribution(slow),
    fast: distribution(fast),
    blockRatios,
    timerOverhead: distribution(overhead),
  };
}

/**
 * In the parent: `rounds` per-call children (kind `percall`), one after the other, each logged.
 * @param {object} o
 * @param {(options: object, timeoutMs: number, what: string, gc?: boolean) => Promise<any>} o.child
 * @param {number} o.rounds
 * @param {object} o.options  the child's options
 * @param {object[]} o.into   results are pushed here
 * @param {[string, string]} o.names  the slow and the fast call, for the log
 * @param {(msg: string) => void} o.log
 * @param {boolean} [o.gc]    run the children with --expose-gc
 */
export async function perCallChildren(o) {
  for (let round = 0; round < o.rounds; round++) {
    const r = await o.child({ kind: 'percall', ...o.options }, 180_000, `per-call child ${round + 1}`, o.gc);
    o.into.push(r);
    o.log(
      `per call ${round + 1}/${o.rounds}: ${o.names[0]} ${fmtNs(r.slow.mean)}, ${o.names[1]} ${fmtNs(r.fast.mean)} ` +
        `(p99 ${fmtNs(r.fast.p99)}): ${fmtNum(median(r.blockRatios), 0)}×`,
    );
  }
}

/**
 * The ratio slow ÷ fast of the mean per-call times: per child, the median over its block pairs (a
 * stretch of the machine slowed by other processes, or a pause, hits one block pair, not the
 * child's figure), then median (min–max) over children; the means, the fast call's p50 and p99
 * likewise (µs).
 * @param {{slow: ReturnType<typeof distribution>, fast: ReturnType<typeof distribution>}[]} children
 */
export function summarizePerCall(children) {
  const over = (f) => stats(children.map(f));
  return {
    ratio: over((r) => median(r.blockRatios)),
    /** The typical call of each: p50 ÷ p50 (shown beside the goal's ratio of means). */
    medianRatio: over((r) => r.slow.p50 / r.fast.p50),
    slowUs: over((r) => r.slow.mean / 1000),
    fastUs: over((r) => r.fast.mean / 1000),
    fastP50: over((r) => r.fast.p50 / 1000),
    fastP99: over((r) => r.fast.p99 / 1000),
  };
}

/**
 * One row per child: the slow call's mean, p50, p99; the fast call's mean, p50, p99, p99.9, max; the ratio.
 * @param {{slow: ReturnType<typeof distribution>, fast: ReturnType<typeof distribution>}[]} children
 * @param {string} slowName  markdown
 * @param {string} fastName  markdown
 */
export function perCallTable(children, slowName, fastName) {
  const us = (x, d = 2) => fmtNum(x / 1000, d);
  return mdTable(
    [
      'child',
      `${slowName} µs/call: mean`,
      'p50',
      'p99',
      `${fastName} µs/call: mean`,
      'p50',
      'p99',
      'p99.9',
      'max',
      'ratio of means: median of block pairs (min–max)',
      'ratio of p50s',
    ],
    children.map((r, i) => [
      String(i + 1),
      us(r.slow.mean, 1),
      us(r.slow.p50, 1),
      us(r.slow.p99, 1),
      us(r.fast.mean),
      us(r.fast.p50),
      us(r.fast.p99),
      us(r.fast.p999),
      us(r.fast.max, 0),
      `${fmtNum(median(r.blockRatios), 0)}× (${fmtNum(Math.min(...r.blockRatios), 0)}–${fmtNum(Math.max(...r.blockRatios), 0)})`,
      `${fmtNum(r.slow.p50 / r.fast.p50, 0)}×`,
    ]),
  );
}

/**
 * How the per-call table was measured, for the report.
 * @param {object} o
 * @param {number} o.children  @param {number} o.blocks  @param {number} o.slowCalls  @param {number} o.fastCalls
 * @param {number} o.warmupMs  @param {string} o.slow  @param {string} o.fast  markdown of each call
 * @param {number} o.timerNs   the timer's median cost
 */
export function perCallMethod(o) {
  return (
    `After ${o.warmupMs / 1000} s of untimed warm-up of both calls, ${o.blocks} alternating blocks of ` +
    `${fmtInt(o.slowCalls)} awaited ${o.slow} then ${fmtInt(o.fastCalls)} awaited ${o.fast}, every call timed on ` +
    'its own: `t0 = process.hrtime.bigint(); await call(); t = process.hrtime.bigint() − t0`. Means and quantiles ' +
    `are over every call of the child (${fmtInt(o.blocks * o.fastCalls)} fast, ${fmtInt(o.blocks * o.slowCalls)} slow); ` +
    `the timer's own cost (two back-to-back \`hrtime.bigint()\`, median ${fmtNum(o.timerNs, 0)} ns) is included, ` +
    `not subtracted. Each row is a fresh child (${o.children} of them). The ratio is taken per block pair (the slow ` +
    "block's mean ÷ the fast block's mean, neighbours in time), its median (min–max) over the child's block pairs " +
    "shown; the goal's ratio is the median over children of those medians, so that a stretch of this shared " +
    'machine slowed by other processes, which hits one block, does not decide the figure.'
  );
}

/** mulberry32: a small seeded PRNG, so every run draws the same sequence. @param {number} seed */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Calls `issue(i, atMs)` at a steady `rate` per second for `durationMs`: every `tickMs` it issues the
 * calls due since the start (no drift; a late tick catches up by its own due calls only), and
 * `onTick(elapsedMs)` after them. Resolves once the last tick ran, with how many were issued.
 * @param {{rate: number, durationMs: number, tickMs: number, issue: (i: number, atMs: number) => void, onTick?: (atMs: number) => void}} o
 */
export function steadyRate(o) {
  const t0 = performance.now();
  let issued = 0;
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now() - t0;
      const end = Math.min(now, o.durationMs);
      const due = Math.floor((end / 1000) * o.rate);
      while (issued < due) o.issue(issued++, now);
      o.onTick?.(end);
      if (now >= o.durationMs) {
        clearInterval(timer);
        resolve(issued);
      }
    }, o.tickMs);
  });
}
