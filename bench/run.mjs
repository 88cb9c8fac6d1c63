// `npm run bench` runs every scenario; `npm run bench -- --gate --access` runs the ones named. Each
// scenario is one file exporting `run()`; its result, goals first, goes to bench/results/<name>.json,
// and RESULTS.md is written again from every result there (report.mjs).
// Needs the built package (`npm run build`): the bench measures what users install.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { writeReport } from './report.mjs';

const SCENARIOS = [
  'clients',
  'cold-import',
  'memory',
  'workloads',
  'access',
  'tracker',
  'gate',
  'invalidation',
  'redis',
  'postgres',
  'holds',
  'ai',
  'view',
];

const here = new URL('./', import.meta.url);
const named = process.argv.slice(2).map((a) => a.replace(/^--/, ''));
const unknown = named.filter((n) => !SCENARIOS.includes(n));
if (unknown.length > 0) {
  console.error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  process.exit(2);
}
if (!existsSync(new URL('../dist/index.js', here))) {
  console.error('dist/ is missing: npm run build first');
  process.exit(2);
}
// The peers (openai, stripe, ky) live in bench/package.json, away from the SDK's own dependencies.
if (!existsSync(new URL('node_modules/openai', here))) {
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent'], { cwd: here, stdio: 'inherit' });
}
mkdirSync(new URL('results/', here), { recursive: true });

let failed = 0;
for (const name of named.length > 0 ? named : SCENARIOS) {
  const started = performance.now();
  const machine = { node: process.version, cpus: cpus().length, loadavg: loadavg().map((x) => x.toFixed(2)) };
  const { run } = await import(new URL(`${name}.mjs`, here).href);
  const result = await run();
  const seconds = Math.round((performance.now() - started) / 1000);
  const record = { scenario: name, date: new Date().toISOString(), seconds, machine, ...result };
  writeFileSync(new URL(`results/${name}.json`, here), `${JSON.stringify(record, null, 2)}\n`);
  console.log(`\n${name} (${seconds} s)`);
  for (const g of result.goals) {
    const verdict = g.pass === null ? 'INFO' : g.pass ? 'PASS' : 'FAIL';
    if (g.pass === false) failed++;
    console.log(`  ${verdict} ${g.name}: ${g.figure}${g.goal ? ` (goal ${g.goal})` : ''}`);
  }
}
await writeReport(SCENARIOS);
console.log('\nbench/RESULTS.md rewritten from bench/results/*.json');
// Exit at once: keep-alive sockets and client timers of the scenarios would hold the process open.
process.exit(failed > 0 ? 1 : 0);
