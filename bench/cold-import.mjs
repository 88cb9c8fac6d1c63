// Cold import time: a fresh `node` per sample runs `await import(<package>)` and nothing else.
//
// Method: the child is an inline ESM script (`node --input-type=module -e`, cwd bench/ so packages
// resolve from bench/node_modules), so no harness module is loaded before the import. It reads
// `performance.now()` just before and just after the `import()`. In Node, performance.now() counts
// from the process's start (performance.timeOrigin), so the second reading is "process start to
// package ready": Node's own bootstrap plus the import. The first reading's difference is the import
// alone. A `none` target (no import) gives the bootstrap floor. Samples are interleaved (the order
// rotates each round) so a slow moment of the machine hits every package alike; medians are reported.
import { RESULT_PREFIX } from './shared.mjs';
import { resultOf, runNode } from './spawn.mjs';

/** The packages compared; `none` is Node's bootstrap alone. */
export const COLD_TARGETS = ['none', 'billing-sdk', 'openai', 'stripe'];

/** @param {string} target */
function childSource(target) {
  const load = target === 'none' ? '' : `await import(${JSON.stringify(target)});`;
  return [
    'const before = performance.now();',
    load,
    'const after = performance.now();',
    `process.stdout.write(${JSON.stringify(RESULT_PREFIX)} + JSON.stringify({ sinceStartMs: after, importMs: after - before }) + '\\n');`,
  ].join('\n');
}

/**
 * @typedef {object} ColdSample
 * @property {string} target
 * @property {number} round
 * @property {number} sinceStartMs  process start → import resolved
 * @property {number} importMs      the `import()` alone
 */

/**
 * @param {{n: number, cwd: string}} options
 * @returns {Promise<ColdSample[]>}
 */
export async function measureColdImports({ n, cwd }) {
  /** @type {ColdSample[]} */
  const samples = [];
  for (let round = 0; round < n; round++) {
    const order = COLD_TARGETS.map((_, i) => COLD_TARGETS[(i + round) % COLD_TARGETS.length]);
    for (const target of order) {
      const run = await runNode(['--input-type=module', '-e', childSource(target)], {
        cwd,
        timeoutMs: 20_000,
      });
      const r = resultOf(run, `cold import of ${target}`);
      samples.push({ target, round, sinceStartMs: r.sinceStartMs, importMs: r.importMs });
    }
  }
  return samples;
}
