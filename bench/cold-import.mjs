// Cold import: a fresh `node` per sample runs `await import(pkg)` and nothing else; the time from the
// process start (`performance.timeOrigin`) to the import done. Packages interleaved, 15 rounds.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { goal, median, r3 } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Cold import';
export const how =
  "A fresh `node` per sample runs `await import(pkg)` and nothing else; the figure is `performance.now()` after it, i.e. from process start. 15 rounds, the packages' order rotating each round.";

const PACKAGES = ['', 'billing-sdk', 'openai', 'stripe'];
const ROUNDS = 15;

function sample(pkg) {
  const script = pkg
    ? `await import(${JSON.stringify(pkg)}); console.log(performance.now())`
    : 'console.log(performance.now())';
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('./', import.meta.url)),
    encoding: 'utf8',
  });
  return Number(out.trim());
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const ms = Object.fromEntries(PACKAGES.map((p) => [p || '(node alone)', []]));
  for (let round = 0; round < ROUNDS; round++) {
    // The order rotates each round, so no package always runs right after another.
    for (let i = 0; i < PACKAGES.length; i++) {
      const pkg = PACKAGES[(i + round) % PACKAGES.length];
      ms[pkg || '(node alone)'].push(sample(pkg));
    }
  }
  const table = Object.entries(ms).map(([pkg, xs]) => ({
    package: pkg,
    median_ms: r3(median(xs)),
    min_ms: r3(Math.min(...xs)),
    max_ms: r3(Math.max(...xs)),
  }));
  const sdk = r3(median(ms['billing-sdk']));
  const openai = r3(median(ms.openai));
  return {
    goals: [
      goal(
        'cold import, process start → imported (median)',
        `billing-sdk ${sdk} ms vs openai ${openai} ms`,
        'no slower than openai',
        sdk <= openai,
      ),
    ],
    rounds: ROUNDS,
    table,
  };
}
