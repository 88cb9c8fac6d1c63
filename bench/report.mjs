// Turns raw samples into medians, per-round ratios, goals and the two outputs: bench/RESULTS.md and a
// compact summary for the terminal. Pure functions: no I/O, so the maths can be read in one place.
import { FLAT_LIMIT_BYTES, MARKS } from './memory.mjs';

/** The baseline every ratio is taken against. */
export const BASELINE = 'fetch';
/** The SDK the goals are about. */
export const SUBJECT = 'billing-sdk';
/** The plain HTTP library billing-sdk is built on: its CPU is compared with `ky(...).json()` too. */
export const KY = 'ky';
/** The SDK on its other engine (ky on Node's global fetch), shown beside the default one. */
export const SUBJECT_ON_FETCH = 'billing-sdk-fetch';
/** The peers billing-sdk must be ahead of at every concurrency (their fetch-based clients). */
export const FETCH_PEERS = ['openai', 'stripe-fetch'];
/** billing-sdk with a subscriber on its tracing channels. */
const TRACED = 'billing-sdk-traced';
/** stripe-node on node:http: the gap to it is reported, not a goal. */
export const NODE_HTTP_PEER = 'stripe-node-http';
/** Issue 14's goals: req/s per concurrency, client CPU at each. */
export const GOALS = { rpsRatio: { 1: 1.0, 32: 1.2 }, cpuRatio: 1.0, cpuVsKy: 1.1 };

/**
 * @typedef {object} Sample  one child's measurement
 * @property {string} client
 * @property {number} concurrency
 * @property {number} round
 * @property {number} rps
 * @property {number} cpuUsPerReq
 * @property {number} requests
 * @property {number} elapsedMs
 */

/** @param {number[]} xs */
export function median(xs) {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Median, min and max of a list (NaN when empty). @param {number[]} xs */
export function stats(xs) {
  return {
    median: median(xs),
    min: xs.length ? Math.min(...xs) : Number.NaN,
    max: xs.length ? Math.max(...xs) : Number.NaN,
    n: xs.length,
  };
}

/**
 * Per client and concurrency: medians of req/s and CPU µs/req over rounds, and the medians of the
 * per-round ratios to raw fetch. A ratio is taken within one round (client / fetch of the same round
 * and concurrency), so a slow stretch of the machine that hits both cancels out; its min–max over
 * rounds is the noise figure.
 * @param {Sample[]} samples
 * @param {string} client
 * @param {number} concurrency
 */
export function cell(samples, client, concurrency) {
  const mine = samples.filter((s) => s.client === client && s.concurrency === concurrency);
  const base = new Map(
    samples.filter((s) => s.client === BASELINE && s.concurrency === concurrency).map((s) => [s.round, s]),
  );
  const rpsRatios = [];
  const cpuRatios = [];
  for (const s of mine) {
    const b = base.get(s.round);
    if (!b) continue;
    rpsRatios.push(s.rps / b.rps);
    cpuRatios.push(s.cpuUsPerReq / b.cpuUsPerReq);
  }
  return {
    rps: stats(mine.map((s) => s.rps)),
    cpu: stats(mine.map((s) => s.cpuUsPerReq)),
    rpsRatio: stats(rpsRatios),
    cpuRatio: stats(cpuRatios),
  };
}

/**
 * Per-round ratio of `client`'s CPU per request to `other`'s (same round, same concurrency): median and
 * min–max over rounds, like {@link cell}'s ratios to raw fetch.
 * @param {Sample[]} samples @param {string} client @param {string} other @param {number} concurrency
 */
export function cpuRatioTo(samples, client, other, concurrency) {
  const base = new Map(
    samples.filter((s) => s.client === other && s.concurrency === concurrency).map((s) => [s.round, s]),
  );
  const ratios = [];
  for (const s of samples) {
    if (s.client !== client || s.concurrency !== concurrency) continue;
    const b = base.get(s.round);
    if (b) ratios.push(s.cpuUsPerReq / b.cpuUsPerReq);
  }
  return stats(ratios);
}

/**
 * Everything the report shows, computed once.
 * @param {object} data  see run.mjs
 */
export function summarize(data) {
  const { clients, samples, concurrencies, cold, memory } = data;
  const rows = clients.map((c) => ({
    ...c,
    cells: Object.fromEntries(concurrencies.map((k) => [k, cell(samples, c.name, k)])),
  }));
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));

  // Noise: how much the floor itself moved between rounds, and the widest ratio spread of any client.
  const noise = concurrencies.map((k) => {
    const base = byName[BASELINE]?.cells[k].rps;
    const spreads = rows
      .filter((r) => r.name !== BASELINE && r.cells[k].rpsRatio.n > 1)
      .map((r) => ({ name: r.name, width: r.cells[k].rpsRatio.max - r.cells[k].rpsRatio.min }));
    const widest = spreads.sort((a, b) => b.width - a.width)[0];
    return {
      concurrency: k,
      baselineSpreadPct: base ? ((base.max - base.min) / base.median) * 100 : Number.NaN,
      widest,
    };
  });

  const coldRows = cold
    ? [...new Set(cold.map((s) => s.target))].map((target) => {
        const mine = cold.filter((s) => s.target === target);
        return {
          target,
          sinceStart: stats(mine.map((s) => s.sinceStartMs)),
          importOnly: stats(mine.map((s) => s.importMs)),
        };
      })
    : null;

  const goals = [];
  const subject = byName[SUBJECT];
  for (const k of concurrencies) {
    const r = subject?.cells[k].rpsRatio;
    const want = GOALS.rpsRatio[k] ?? 1.0;
    goals.push(
      goal(
        r,
        (x) => x >= want,
        `${SUBJECT} req/s at c=${k}: ${fmtRatio(r)} raw fetch (goal ≥ ${want.toFixed(2)}×)`,
      ),
    );
  }
  for (const k of concurrencies) {
    const mine = subject?.cells[k].rps.median;
    const peers = FETCH_PEERS.filter((n) => byName[n]).map((n) => ({
      n,
      rps: byName[n].cells[k].rps.median,
    }));
    const ok = Number.isFinite(mine) && peers.length ? peers.every((p) => mine > p.rps) : null;
    const parts = peers.map((p) => `${p.n} ${fmtInt(p.rps)}`).join(', ');
    goals.push({
      ok,
      text: `${SUBJECT} ahead of the fetch-based peers at c=${k}: ${fmtInt(mine)} req/s vs ${parts || '–'} (median req/s)`,
    });
  }
  {
    const ratios = concurrencies.map((k) => subject?.cells[k].cpuRatio);
    const ok = ratios.every((r) => r && r.n > 0) ? ratios.every((r) => r.median <= GOALS.cpuRatio) : null;
    const parts = concurrencies.map((k, i) => `${fmtRatio(ratios[i])} at c=${k}`).join(', ');
    goals.push({
      ok,
      text: `${SUBJECT} client CPU per request: ${parts} raw fetch (goal ≤ ${GOALS.cpuRatio}× at each)`,
    });
  }
  {
    const ratios = concurrencies.map((k) => cpuRatioTo(samples, SUBJECT, KY, k));
    const ok = ratios.every((r) => r.n > 0) ? ratios.every((r) => r.median <= GOALS.cpuVsKy) : null;
    const parts = concurrencies.map((k, i) => `${fmtRatio(ratios[i])} at c=${k}`).join(', ');
    goals.push({
      ok,
      text: `${SUBJECT} client CPU per request vs plain \`ky(...).json()\`: ${parts} (goal ≤ ${GOALS.cpuVsKy.toFixed(2)}× at each; per-round ratio, same run)`,
    });
  }
  if (coldRows) {
    const mine = coldRows.find((r) => r.target === SUBJECT)?.sinceStart;
    const theirs = coldRows.find((r) => r.target === 'openai')?.sinceStart;
    const ok = mine && theirs ? mine.median <= theirs.median : null;
    goals.push({
      ok,
      text: `cold import (process start → imported, median): ${SUBJECT} ${fmtMs(mine?.median)} vs openai ${fmtMs(theirs?.median)} (goal: no slower)`,
    });
  }
  if (memory) {
    const extra = memory.sdk.growthBytes - memory.control.growthBytes;
    goals.push({
      ok: extra <= FLAT_LIMIT_BYTES,
      text: `memory flat while walking 1000 pages: heap after GC grew ${fmtBytes(memory.sdk.growthBytes)} from page 100 to 1000, raw fetch walking the same pages ${fmtBytes(memory.control.growthBytes)}: ${fmtBytes(extra)} more (goal ≤ ${fmtBytes(FLAT_LIMIT_BYTES)} more)`,
    });
  }
  const notes = [];
  for (const k of concurrencies) {
    // Issue 21: what a tracer's subscription costs, and (by the goal above) that none costs nothing.
    const traced = byName[TRACED] && subject ? cpuRatioTo(samples, TRACED, SUBJECT, k) : null;
    if (traced?.n)
      notes.push(
        `tracing at c=${k}: with a subscriber on billing-sdk:request and billing-sdk:attempt, CPU per request is ${fmtRatio(traced)} billing-sdk's without one (per-round ratio, same run)`,
      );
  }
  for (const k of concurrencies) {
    const gap = byName[NODE_HTTP_PEER] && subject ? cpuRatioTo(samples, SUBJECT, NODE_HTTP_PEER, k) : null;
    const rpsGap = byName[NODE_HTTP_PEER]?.cells[k].rps.median / subject?.cells[k].rps.median;
    if (gap?.n)
      notes.push(
        `gap to stripe-node's node:http client at c=${k}: it does ${fmtNum(rpsGap)}× billing-sdk's req/s; billing-sdk's CPU per request is ${fmtRatio(gap)} its`,
      );
    const other =
      byName[SUBJECT_ON_FETCH] && subject ? cpuRatioTo(samples, SUBJECT_ON_FETCH, SUBJECT, k) : null;
    if (other?.n)
      notes.push(
        `engines at c=${k}: ky on Node's fetch costs ${fmtRatio(other)} the CPU per request of ky on undici's dispatcher API (the default in Node)`,
      );
  }
  return { rows, noise, coldRows, goals, notes };
}

/** @param {ReturnType<typeof stats> | undefined} r @param {(x: number) => boolean} pass @param {string} text */
function goal(r, pass, text) {
  return { ok: r && r.n > 0 ? pass(r.median) : null, text };
}

export const fmtInt = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
export const fmtNum = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const fmtMs = (x) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : '–');
/** `0.93× (0.90–0.95)`: median of the per-round ratios, then their min–max. */
export function fmtRatio(r) {
  if (!r || r.n === 0) return '–';
  return r.n > 1 ? `${fmtNum(r.median)}× (${fmtNum(r.min)}–${fmtNum(r.max)})` : `${fmtNum(r.median)}×`;
}
export function fmtBytes(b) {
  if (!Number.isFinite(b)) return '–';
  const sign = b < 0 ? '−' : '+';
  const a = Math.abs(b);
  return a >= 1024 * 1024
    ? `${sign}${(a / 1024 / 1024).toFixed(2)} MiB`
    : `${sign}${(a / 1024).toFixed(0)} KiB`;
}
const kb = (b) => `${(b / 1000).toFixed(1)} KB`;
export const fmtMiB = (b) => `${(b / 1024 / 1024).toFixed(2)} MiB`;
export const mark = (ok) => (ok === null ? 'N/A ' : ok ? 'PASS' : 'FAIL');

/** @param {string[]} header @param {string[][]} body */
export function mdTable(header, body) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...body.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** The main table, in the column order the issue asks for. CPU is at the highest concurrency. */
function mainTable(data, summary) {
  const [lo, hi] = [data.concurrencies[0], data.concurrencies[data.concurrencies.length - 1]];
  const header = [
    'client',
    `req/s c=${lo}`,
    'ratio',
    `req/s c=${hi}`,
    'ratio',
    `CPU µs/req (c=${hi})`,
    'CPU ratio',
  ];
  const body = summary.rows.map((r) => {
    if (r.failed) return [r.name, `failed: ${r.failed.split('\n')[0].slice(0, 120)}`, '', '', '', '', ''];
    const a = r.cells[lo];
    const b = r.cells[hi];
    return [
      r.name,
      fmtInt(a.rps.median),
      fmtRatio(a.rpsRatio),
      fmtInt(b.rps.median),
      fmtRatio(b.rpsRatio),
      fmtInt(b.cpu.median),
      fmtRatio(b.cpuRatio),
    ];
  });
  return { header, body };
}

/** @param {object} data  see run.mjs @param {ReturnType<typeof summarize>} summary */
export function renderMarkdown(data, summary) {
  const { meta } = data;
  const out = [];
  const main = mainTable(data, summary);
  out.push('# billing-sdk benchmark results', '');
  out.push(
    `Written by \`bench/run.mjs\` on ${meta.date}. Command: \`${meta.command}\`. Whole run: ${meta.totalSeconds.toFixed(0)} s ` +
      `(${meta.rounds} rounds × ${data.concurrencies.length} concurrencies × ${data.clients.length} clients, ` +
      `${meta.warmupMs} ms warm-up + ${meta.durationMs} ms measured each).`,
    '',
  );

  if (meta.distChanged) {
    out.push(
      '> **Warning: `dist/` changed while this run was measuring** (the SDK was rebuilt). Its samples mix two ' +
        'builds: re-run before trusting the billing-sdk numbers.',
      '',
    );
  }
  out.push('## Goals', '');
  for (const g of summary.goals) out.push(`- **${mark(g.ok).trim()}** ${g.text}`);
  if (summary.notes?.length) {
    out.push('', 'Reported, not goals:', '');
    for (const n of summary.notes) out.push(`- ${n}`);
  }
  out.push(
    '',
    'Where the CPU goes, what was removed, and the way around for the goals still missed: [PROFILE.md](PROFILE.md).',
    '',
  );

  out.push('## Throughput and client CPU', '');
  out.push(mdTable(main.header, main.body), '');
  out.push(
    '`ratio` is taken per round (the client ÷ raw fetch of the same round and concurrency), then the median over ' +
      'rounds is shown with the min–max of those per-round ratios in parentheses: that range is the noise figure. ' +
      'req/s and CPU µs/req are medians over rounds. CPU is the client process’s user+system time ' +
      '(`process.cpuUsage()`) over the measured window divided by the requests completed in it.',
    '',
  );
  out.push('Clients:', '');
  for (const r of summary.rows) out.push(`- \`${r.name}\`: ${r.label}`);
  out.push('');

  out.push('### CPU per request at each concurrency', '');
  out.push(
    mdTable(
      ['client', ...data.concurrencies.flatMap((k) => [`CPU µs/req c=${k}`, 'ratio'])],
      summary.rows
        .filter((r) => !r.failed)
        .map((r) => [
          r.name,
          ...data.concurrencies.flatMap((k) => [
            fmtInt(r.cells[k].cpu.median),
            fmtRatio(r.cells[k].cpuRatio),
          ]),
        ]),
    ),
    '',
  );

  out.push('### Noise', '');
  for (const n of summary.noise) {
    out.push(
      meta.rounds < 2
        ? `- c=${n.concurrency}: one round only, so no spread: treat every ratio as rough.`
        : `- c=${n.concurrency}: raw fetch req/s moved ${fmtNum(n.baselineSpreadPct, 1)}% (max−min over median) across ` +
            `rounds; the widest per-round ratio range was ${n.widest?.name}'s, ${fmtNum(n.widest?.width)} wide.`,
    );
  }
  const load = (l) => l.map((x) => x.toFixed(2)).join(', ');
  out.push(
    `- Load average (1, 5, 15 min) at start: ${load(meta.machine.loadavg)}; at the end: ${load(meta.loadavgEnd)}. ` +
      'Anything else running on the machine (a test suite, a build) shows up here and widens the ranges; ' +
      'differences smaller than the ratio ranges above are noise.',
    '',
  );

  if (summary.coldRows) {
    out.push('## Cold import', '');
    out.push(
      mdTable(
        ['package', 'process start → imported (median)', 'min–max', '`import()` alone (median)'],
        summary.coldRows.map((r) => [
          r.target === 'none' ? '(nothing: Node bootstrap)' : r.target,
          fmtMs(r.sinceStart.median),
          `${fmtMs(r.sinceStart.min)} – ${fmtMs(r.sinceStart.max)}`,
          r.target === 'none' ? '–' : fmtMs(r.importOnly.median),
        ]),
      ),
      '',
    );
    out.push(
      `${meta.coldN} fresh \`node\` processes per package, interleaved (the order rotates each round). Each child is an ` +
        'inline ESM script that runs `await import(pkg)` and nothing else; `performance.now()` after the import counts ' +
        'from the process start (`performance.timeOrigin`), the reading before it gives the import alone.',
      '',
    );
  }

  if (data.memory) {
    const { sdk, control } = data.memory;
    out.push('## Memory while walking 1000 pages', '');
    out.push(
      mdTable(
        ['page', `${SUBJECT} heapUsed`, 'raw fetch control heapUsed'],
        MARKS.map((p) => [
          String(p),
          fmtMiB(sdk.series.find((s) => s.page === p)?.heapUsed ?? Number.NaN),
          fmtMiB(control.series.find((s) => s.page === p)?.heapUsed ?? Number.NaN),
        ]),
      ),
      '',
    );
    out.push(
      `\`for await (const inv of billing.invoices.list({ account_ref_id: 'acct_1', page_size: 20 }))\` over 1000 pages ` +
        `(${sdk.items} invoices, ${fmtMs(sdk.elapsedMs)}), in a child run with \`--expose-gc\`: at the first item of each ` +
        'page listed, `global.gc()` then `process.memoryUsage().heapUsed`. Growth from page 100 to 1000: ' +
        `${fmtBytes(sdk.growthBytes)}. The control walks the same URLs with raw fetch + JSON.parse, keeping nothing ` +
        `(${fmtBytes(control.growthBytes)}): V8 still compiling and lazily swept fetch/AbortSignal bookkeeping make ` +
        'even that grow a little. Keeping every page would add about 20 MB.',
      '',
    );
  }

  if (data.sizes) {
    out.push('## Bundle sizes', '');
    out.push(
      // Only the fields measure() has always returned: its row shape is the size gate's, not ours.
      mdTable(
        ['app (gzip)', 'initial', 'all chunks', 'counted against the budget', 'budget', 'within budget'],
        data.sizes.map((r) => [
          r.name,
          kb(r.initial),
          kb(r.total),
          kb(r.measured),
          kb(r.budget),
          r.ok ? 'yes' : 'NO',
        ]),
      ),
      '',
    );
    out.push(
      'From `scripts/size.mjs` `measure()`: esbuild, platform browser, minified, code splitting, gzip level 9.',
      '',
    );
  }
  if (data.tarball) {
    const { packed, unpacked, files } = data.tarball;
    out.push(
      '## Package',
      '',
      `\`npm pack\`: ${kb(packed)} packed, ${kb(unpacked)} unpacked, ${files} files (the tarball \`npm install billing-sdk\` downloads; dependencies not included).`,
      '',
    );
  }

  out.push('## Machine and versions', '');
  const m = meta.machine;
  out.push(`- CPU: ${m.cpuModel} × ${m.cpuCount}; memory ${m.memoryGiB} GiB; ${m.os}`);
  out.push(`- Node ${meta.node}`);
  for (const [name, v] of Object.entries(meta.versions)) out.push(`- ${name} ${v}`);
  out.push('');

  out.push('## Method', '');
  out.push(
    `- Server: \`bench/server.mjs\`, \`node:http\` in its own process on 127.0.0.1 (ephemeral port), keep-alive, every ` +
      `body precomputed (${meta.pageBytes} bytes for a 20-invoice page with all 17 Invoice fields); it refuses any ` +
      'other query or key, so every client is proven to request the same bytes.',
    `- Each (client, concurrency, round) runs in a fresh \`node\` child (\`bench/measure-child.mjs\`): one request checked ` +
      `in full, ${meta.warmupMs} ms of warm-up at the same concurrency, then c workers loop for ${meta.durationMs} ms; ` +
      'requests in flight at the deadline complete and count, and the window ends when the last one does.',
    `- Rounds: ${meta.rounds}; in each, every concurrency, every client, in an order rotated by one each round. ` +
      'A short untimed pass of every client precedes round 1 (it warms the server and fails fast on a broken client).',
    '- Retries are off in every client that has them (billing-sdk, ky, openai, stripe); stripe telemetry is off.',
    '',
  );
  return `${out.join('\n')}\n`;
}

/** A terminal-width summary. @param {object} data @param {ReturnType<typeof summarize>} summary */
export function renderCompact(data, summary) {
  const main = mainTable(data, summary);
  const rows = [main.header, ...main.body];
  const widths = main.header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : (c ?? '').padStart(widths[i]))).join('  ');
  const out = ['', line(main.header), ...main.body.map(line), ''];
  if (data.meta.distChanged)
    out.push('WARNING: dist/ changed during the run (SDK rebuilt): results mix two builds; re-run.');
  for (const g of summary.goals) out.push(`${mark(g.ok)}  ${g.text}`);
  for (const n of summary.notes ?? []) out.push(`      ${n}`);
  if (summary.coldRows) {
    out.push(
      `cold import (median from process start): ${summary.coldRows.map((r) => `${r.target} ${fmtMs(r.sinceStart.median)}`).join(', ')}`,
    );
  }
  if (data.tarball)
    out.push(`package: ${kb(data.tarball.packed)} packed, ${kb(data.tarball.unpacked)} unpacked`);
  if (data.sizes) {
    out.push(`bundle: ${data.sizes.map((r) => `${r.name} ${(r.measured / 1000).toFixed(1)} KB`).join(', ')}`);
  }
  out.push(`whole run ${data.meta.totalSeconds.toFixed(0)} s`);
  return `${out.join('\n')}\n`;
}
