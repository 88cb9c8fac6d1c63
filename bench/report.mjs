// Writes bench/RESULTS.md from bench/results/*.json: per scenario its goals and figures, the command
// that reproduces them and how they are measured (each scenario's `title` and `how`), and the two
// comparison tables a reader needs side by side (clients, gate routes; the rest stays in the JSON).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const here = new URL('./', import.meta.url);

/** What profiling showed about the client goals still missed (earlier runs, `node --cpu-prof`). */
const NOTES = [
  '## Where the client CPU goes',
  '',
  'In Node the SDK sends through undici’s dispatcher API (no WHATWG streams, no `Response` body), which',
  'is what puts it ahead of ky, openai-node and stripe-node’s fetch client. The rest of the gap to raw',
  'fetch at one request in flight is ky’s per-call `Request` (built, then cloned for retries), about 9 % of',
  'the client’s CPU in a profile; the SDK’s own frames besides `JSON.parse` are under 4 %. Closing it',
  'means not calling ky, which was measured and declined. Profile a client with `node --cpu-prof`.',
  '',
];
const verdict = (pass) => (pass === null ? 'info' : pass ? '**PASS**' : '**FAIL**');
const cell = (s) => String(s).replaceAll('|', '\\|');

function table(rows) {
  const keys = Object.keys(rows[0]);
  return [
    `| ${keys.join(' | ')} |`,
    `|${keys.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${keys.map((k) => cell(r[k])).join(' | ')} |`),
  ];
}

/** The extra table of a scenario, when it has one worth reading side by side. */
function extra(name, result) {
  if (name === 'clients') return table(result.table);
  if (name === 'gate') return table(result.table);
  return [];
}

export async function writeReport(scenarios) {
  const out = [
    '# billing-sdk benchmark results',
    '',
    'Every figure below comes from `bench/results/<scenario>.json`, written by `npm run bench` (all',
    'scenarios; `npm run bench -- --gate` runs one). Goals compare billing-sdk with something measured in the',
    'same run, side by side, so a busy machine slows both; the absolute numbers are this machine’s (2 cores,',
    'shared with other work while measured: the load average is given per scenario). The gate is measured',
    'in process against one no-op middleware (its req/s goal over HTTP is retired: the noise was larger).',
    '',
  ];
  for (const name of scenarios) {
    const file = new URL(`results/${name}.json`, here);
    if (!existsSync(file)) continue;
    const result = JSON.parse(readFileSync(file, 'utf8'));
    const { title, how } = await import(new URL(`${name}.mjs`, here).href);
    out.push(`## ${title}`, '');
    out.push(
      `\`npm run bench -- --${name}\` · ${result.date.slice(0, 16).replace('T', ' ')} UTC · ${result.seconds} s · Node ${result.machine.node} · load ${result.machine.loadavg.join(', ')}`,
      '',
    );
    out.push('| | what | figure | goal |', '|---|---|---|---|');
    for (const g of result.goals)
      out.push(`| ${verdict(g.pass)} | ${cell(g.name)} | ${cell(g.figure)} | ${cell(g.goal || '–')} |`);
    const more = extra(name, result);
    if (more.length > 0) out.push('', ...more);
    out.push('', how, '');
  }
  out.push(...NOTES);
  writeFileSync(new URL('RESULTS.md', here), out.join('\n'));
}
