// The gate mode of the bench (`npm run bench -- --gate`, issue 26): `createGate` in the frameworks it
// adapts to, against the same route without it, in one run. This file runs the measurements
// (runGate), turns them into goals (summarizeGate) and renders the "Gate" section of RESULTS.md,
// between `<!-- gate:start -->` and `<!-- gate:end -->`.
//
// throughput  per framework (Express 5; Hono 4 on @hono/node-server) and round: a fresh app process
//             (gate-app.mjs: `/plain`, `/gated`, the embedded mock) and a fresh load process
//             (gate-load.mjs): req/s, latency and the app's CPU per request of the route without the
//             gate, behind a no-op middleware, with it (an account answered from the cache; the gate as
//             a middleware, and wrapping the handler), and denied (a navigation of an inactive
//             account: 303 to the paywall, the link reused), in alternating windows
// percall     `gate.check` from the cache in process, every call timed (gate-child.mjs), per fresh child
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmtNs } from './percall.mjs';
import { fmtInt, fmtNum, fmtRatio, mdTable, median, stats } from './report.mjs';
import { compactGoals, firstLine, sectionFoot, sectionHead } from './sections.mjs';
import { modeRunner, resultOf, runNode, startServing } from './spawn.mjs';

const appPath = fileURLToPath(new URL('./gate-app.mjs', import.meta.url));
const loadPath = fileURLToPath(new URL('./gate-load.mjs', import.meta.url));
const childPath = fileURLToPath(new URL('./gate-child.mjs', import.meta.url));

export const GATE_GOALS = {
  /**
   * req/s with the gate ÷ without, same framework: at least. Judged on the handler wrapped (the gate
   * alone) and on the middleware form ÷ a no-op middleware (the gate beyond what the framework
   * charges any middleware).
   */
  rpsRatio: 0.95,
  /** p99 of `gate.check` from the cache, µs: at most */
  checkP99Us: 20,
};
/** Parts of the gate run, for --skip. */
export const GATE_PARTS = ['throughput', 'percall'];
export const FRAMEWORKS = ['express', 'hono'];
const FRAMEWORK_LABEL = { express: 'Express', hono: 'Hono (@hono/node-server)' };
/** Requests in flight during a window, each on its own keep-alive connection. */
const CONCURRENCY = 16;
/** Blocks of windows (gate-load.mjs's BLOCK: 8 windows) per load process: many short ones (see --duration in run.mjs). */
const BLOCKS = 150;
/**
 * Requests per window, per framework: about 30 ms each (Hono serves 5 times as many per second).
 * This VM's speed changes within a tenth of a second: a window must be shorter than that.
 */
const WINDOW_REQUESTS = { express: 200, hono: 800 };
const PERCALL = { blocks: 10, calls: 20_000, warmupMs: 2000 };
/** The kinds of the per-call child, in the table's order, with how the report names them. */
const CALLS = {
  lookup: '`access.isActive` (the cache lookup alone)',
  allowed: '`gate.check`, allowed: Fetch `Request` (protect, Hono)',
  allowedNode: '`gate.check`, allowed: Node request (Express)',
  deniedApi: '`gate.check`, denied, API client: 402 problem+json',
  deniedNav: '`gate.check`, denied, navigation: 303 to the paywall',
};

/**
 * gate-app.mjs for `framework`, once it printed its port. It stops when its stdin closes.
 * @returns {Promise<{port: number, stop: () => Promise<void>}>}
 */
function startApp(framework, cwd) {
  return startServing(`${framework} app`, [appPath, JSON.stringify({ framework })], cwd);
}

/**
 * @param {object} o
 * @param {string} o.cwd
 * @param {(msg: string) => void} o.log
 * @param {number} o.rounds      app processes per framework, and per-call children
 * @param {number} o.warmupMs
 * @param {Set<string>} o.skip
 */
export async function runGate(o) {
  const data = { throughput: [], percall: [], failures: {}, versions: frameworkVersions(o.cwd) };
  const { child, attempt } = modeRunner({ ...o, port: 0, script: childPath, failures: data.failures });

  await attempt('throughput', async () => {
    for (let round = 0; round < o.rounds; round++) {
      // Frameworks alternate, so that a slow stretch of the machine does not hit one of them only.
      for (const framework of round % 2 ? [...FRAMEWORKS].reverse() : FRAMEWORKS) {
        const app = await startApp(framework, o.cwd);
        let result;
        try {
          const options = {
            port: app.port,
            concurrency: CONCURRENCY,
            warmupMs: o.warmupMs,
            requests: WINDOW_REQUESTS[framework],
            blocks: BLOCKS,
          };
          const timeoutMs = o.warmupMs * 2 + 5 * 60_000;
          result = resultOf(
            await runNode([loadPath, JSON.stringify(options)], { cwd: o.cwd, timeoutMs }),
            framework,
          );
        } finally {
          await app.stop();
        }
        data.throughput.push({ framework, round, ...result });
        const m = (kind) => median(result.windows.filter((w) => w.kind === kind).map((w) => w.rps));
        const wrapped = median(againstNeighbours(result.windows, 'wrapped', 'plain').ratios);
        o.log(
          `${framework} ${round + 1}/${o.rounds}: plain ${fmtInt(m('plain'))}, wrapped ${fmtInt(m('wrapped'))} ` +
            `(${fmtNum(wrapped)}×), gated ${fmtInt(m('gated'))}, denied ${fmtInt(m('denied'))} req/s; ` +
            `${result.service.resolve} resolve`,
        );
      }
    }
  });
  await attempt('percall', async () => {
    for (let round = 0; round < o.rounds; round++) {
      const r = await child({ kind: 'percall', ...PERCALL }, 180_000, `per-call child ${round + 1}`);
      data.percall.push(r);
      o.log(
        `per call ${round + 1}/${o.rounds}: gate.check allowed p50 ${fmtNs(r.calls.allowed.p50)}, p99 ` +
          `${fmtNs(r.calls.allowed.p99)}; lookup alone p99 ${fmtNs(r.calls.lookup.p99)}`,
      );
    }
  });
  return data;
}

/** Versions of the frameworks and the load client, read from the installed packages (bench's, else the repo's). */
function frameworkVersions(cwd) {
  const read = (pkg) => {
    for (const dir of [join(cwd, 'node_modules'), join(cwd, '..', 'node_modules')]) {
      try {
        return JSON.parse(readFileSync(join(dir, pkg, 'package.json'), 'utf8')).version;
      } catch {
        // Not there: the next place.
      }
    }
    return 'not installed';
  };
  return Object.fromEntries(['express', 'hono', '@hono/node-server', 'undici'].map((p) => [p, read(p)]));
}

/**
 * Each window of `kind` against the windows of `base` nearest to it in time, one before and one
 * after (in gate-load.mjs's blocks, its neighbours or a few windows away): req/s ÷ theirs (their
 * mean), and the app's CPU per request − theirs. This VM's speed changes within a tenth of a
 * second, so only neighbours are compared; a window with no `base` on either side counts one side.
 * @param {{kind: string, rps: number, cpuUsPerRequest: number}[]} windows  one load process's, in order
 */
export function againstNeighbours(windows, kind, base) {
  const ratios = [];
  const cpuAdded = [];
  const REACH = 4;
  windows.forEach((w, i) => {
    if (w.kind !== kind) return;
    const near = [];
    for (const step of [-1, 1]) {
      for (let j = i + step; j >= 0 && j < windows.length && Math.abs(j - i) <= REACH; j += step) {
        if (windows[j].kind === base) {
          near.push(windows[j]);
          break;
        }
      }
    }
    if (!near.length) return;
    const mean = (f) => near.reduce((sum, n) => sum + f(n), 0) / near.length;
    ratios.push(w.rps / mean((n) => n.rps));
    cpuAdded.push(w.cpuUsPerRequest - mean((n) => n.cpuUsPerRequest));
  });
  return { ratios, cpuAdded };
}

/** Per framework: every process's windows, summarized. */
function summarizeFramework(runs) {
  const windows = runs.flatMap((run) => run.windows);
  const kinds = ['plain', 'noop', 'gated', 'wrapped', 'denied'];
  const per = Object.fromEntries(
    kinds.map((k) => {
      const of = windows.filter((w) => w.kind === k);
      const over = (f) => stats(of.map(f));
      return [
        k,
        {
          rps: over((w) => w.rps),
          cpuUs: over((w) => w.cpuUsPerRequest),
          p50: over((w) => w.latency.p50),
          p99: over((w) => w.latency.p99),
          requests: of.reduce((n, w) => n + w.count, 0),
          windows: of.length,
        },
      ];
    }),
  );
  /** `kind` against `base` over every process (each process's windows compared among themselves). */
  const compare = (kind, base) => {
    const each = runs.map((run) => againstNeighbours(run.windows, kind, base));
    return {
      ratio: stats(each.flatMap((e) => e.ratios)),
      cpuAddedUs: stats(each.flatMap((e) => e.cpuAdded)),
      /** The median ratio of each process: how much one process's figure moves. */
      perProcess: each.map((e) => median(e.ratios)),
    };
  };
  const wrapped = compare('wrapped', 'plain');
  const gated = compare('gated', 'plain');
  const overNoop = compare('gated', 'noop');
  const noop = compare('noop', 'plain');
  const denied = compare('denied', 'plain');
  return {
    windows: windows.length,
    processes: runs.length,
    per,
    ratio: gated.ratio,
    wrappedRatio: wrapped.ratio,
    wrappedPerProcess: wrapped.perProcess,
    /** The middleware form against a middleware that does nothing: the gate's own share. */
    overNoopRatio: overNoop.ratio,
    overNoopPerProcess: overNoop.perProcess,
    noopRatio: noop.ratio,
    deniedRatio: denied.ratio,
    /** The gate's CPU per request in the app: against its neighbours without it. */
    cpuAddedUs: gated.cpuAddedUs,
    wrappedCpuAddedUs: wrapped.cpuAddedUs,
    overNoopCpuAddedUs: overNoop.cpuAddedUs,
    noopCpuAddedUs: noop.cpuAddedUs,
    deniedCpuAddedUs: denied.cpuAddedUs,
    /** Resolve calls per app process (one link, reused for every denied request after the first). */
    resolves: runs.map((run) => run.service.resolve),
    statuses: runs.map((run) => run.service.status),
  };
}

/** Everything the report shows, computed once. @param {Awaited<ReturnType<typeof runGate>>} data */
export function summarizeGate(data) {
  const goals = [];
  const f = data.failures;
  const throughput = {};
  for (const framework of FRAMEWORKS) {
    const runs = data.throughput.filter((t) => t.framework === framework);
    if (runs.length === 0) continue;
    const s = summarizeFramework(runs);
    throughput[framework] = s;
    const label = FRAMEWORK_LABEL[framework];
    const form = framework === 'express' ? 'gate.express' : 'gate.hono';
    goals.push({
      ok: s.wrappedRatio.median >= GATE_GOALS.rpsRatio,
      text:
        `${label}: the gated route (\`${form}(need, handler)\`) ${fmtInt(s.per.wrapped.rps.median)} req/s vs ` +
        `${fmtInt(s.per.plain.rps.median)} without the gate: ${fmtRatio(s.wrappedRatio)} (goal ≥ ${GATE_GOALS.rpsRatio}×); ` +
        `the app's CPU per request ${signedUs(s.wrappedCpuAddedUs.median)} against its neighbours; per process ` +
        s.wrappedPerProcess.map((r) => `${fmtNum(r)}×`).join(', '),
    });
    goals.push({
      ok: s.overNoopRatio.median >= GATE_GOALS.rpsRatio,
      text:
        `${label}: the gate as a middleware (\`${form}(need)\`) vs a no-op async middleware: ` +
        `${fmtRatio(s.overNoopRatio)} (goal ≥ ${GATE_GOALS.rpsRatio}×); vs the route alone ${fmtRatio(s.ratio)}, ` +
        `the no-op middleware alone ${fmtRatio(s.noopRatio)}; per process ` +
        s.overNoopPerProcess.map((r) => `${fmtNum(r)}×`).join(', '),
    });
  }
  if (data.throughput.length === 0 && f.throughput) {
    goals.push({ ok: false, text: `throughput failed: ${firstLine(f.throughput)}` });
  }
  let percall = null;
  if (data.percall.length) {
    percall = Object.fromEntries(
      Object.keys(CALLS).map((k) => [
        k,
        {
          mean: stats(data.percall.map((r) => r.calls[k].mean)),
          p50: stats(data.percall.map((r) => r.calls[k].p50)),
          p99: stats(data.percall.map((r) => r.calls[k].p99)),
          p999: stats(data.percall.map((r) => r.calls[k].p999)),
          max: stats(data.percall.map((r) => r.calls[k].max)),
        },
      ]),
    );
    const worst = Math.max(percall.allowed.p99.max, percall.allowedNode.p99.max);
    goals.push({
      ok: worst / 1000 <= GATE_GOALS.checkP99Us,
      text:
        `\`gate.check\` from the cache, allowed: p99 ${fmtNs(percall.allowed.p99.median)} (Fetch request), ` +
        `${fmtNs(percall.allowedNode.p99.median)} (Node request), worst child ${fmtNs(worst)}; p50 ` +
        `${fmtNs(percall.allowed.p50.median)} (goal p99 ≤ ${GATE_GOALS.checkP99Us} µs)`,
    });
    // The gate's own CPU, timed in blocks (percall child): beside the route's CPU over HTTP above.
    const sync = Object.fromEntries(
      ['readAccount', 'honoWrapped', 'expressWrapped'].map((k) => [
        k,
        stats(data.percall.map((r) => r.sync[k])),
      ]),
    );
    percall.sync = sync;
    const share = (k, framework) => {
      const own = (sync[k].median - sync.readAccount.median) / 1000;
      const route = throughput[framework]?.per.plain.cpuUs.median;
      return `${fmtNum(own, 2)} µs${route ? ` (${fmtNum((100 * own) / route, 1)}% of the route's ${fmtNum(route, 1)} µs over HTTP)` : ''}`;
    };
    goals.push({
      ok: null,
      text:
        "the gate's own CPU per allowed request answered from memory, the handler wrapped, beyond reading who " +
        `asks: Hono ${share('honoWrapped', 'hono')}, Express ${share('expressWrapped', 'express')}; ` +
        'blocks of 100,000 calls timed whole, median (the ratio req/s above swings more than that from run to run here)',
    });
  } else if (f.percall) {
    goals.push({ ok: false, text: `per-call timing failed: ${firstLine(f.percall)}` });
  }
  const resolves = [
    ...Object.values(throughput).flatMap((s) => s.resolves),
    ...data.percall.map((r) => r.service.resolve),
  ];
  const denied = Object.values(throughput).reduce((n, s) => n + s.per.denied.requests, 0);
  if (resolves.length) {
    goals.push({
      ok: resolves.every((r) => r === 1),
      text:
        `a denied request with the link reused: ${fmtInt(denied)} denied navigations over HTTP (and every timed ` +
        `denied \`gate.check\`) sent ${resolves.every((r) => r === 1) ? 'one resolve request per process, the first' : `resolve requests per process: ${resolves.join(', ')}`} ` +
        `(goal: one per account and target while the link lives)`,
    });
  }
  return { goals, throughput, percall, denied };
}

const us = (x, d = 1) => (Number.isFinite(x) ? `${fmtNum(x, d)} µs` : '–');
const signedUs = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : '−'}${fmtNum(Math.abs(x), 1)} µs` : '–');
const med = (s, f = (x) => x) => f(s.median);

/**
 * The "Gate" section, markers included.
 * @param {Awaited<ReturnType<typeof runGate>>} data
 * @param {ReturnType<typeof summarizeGate>} summary
 * @param {object} meta  date, command, durationMs, warmupMs, totalSeconds, machine, node, versions, distChanged
 */
export function renderGateMarkdown(data, summary, meta) {
  const out = sectionHead({
    name: 'gate',
    title: 'Gate',
    about:
      '`createGate` from the built package in real framework apps, against the same route without it, in one ' +
      "run; the billing service is the SDK's embedded mock (`billing-sdk/testing`) in the app's process, idle " +
      'while measured: every measured request is answered from the access cache (checked by its request counts).',
    goals: summary.goals,
    meta,
  });

  const names = Object.keys(summary.throughput);
  if (names.length) {
    out.push('### The same route with and without the gate', '');
    const rows = [];
    for (const framework of names) {
      const s = summary.throughput[framework];
      const row = (label, k, ratio, cpuAdded) => [
        FRAMEWORK_LABEL[framework],
        label,
        fmtInt(s.per[k].rps.median),
        ratio,
        med(s.per[k].cpuUs, us),
        cpuAdded,
        fmtNs(s.per[k].p50.median),
        fmtNs(s.per[k].p99.median),
      ];
      rows.push(row('without the gate', 'plain', '1', ''));
      rows.push(
        row(
          'behind a no-op async middleware',
          'noop',
          fmtRatio(s.noopRatio),
          signedUs(s.noopCpuAddedUs.median),
        ),
      );
      rows.push(
        row('gated, allowed (cache): middleware', 'gated', fmtRatio(s.ratio), signedUs(s.cpuAddedUs.median)),
      );
      rows.push(
        row(
          'gated, allowed (cache): handler wrapped',
          'wrapped',
          fmtRatio(s.wrappedRatio),
          signedUs(s.wrappedCpuAddedUs.median),
        ),
      );
      rows.push(
        row(
          'gated, denied navigation (303)',
          'denied',
          fmtRatio(s.deniedRatio),
          signedUs(s.deniedCpuAddedUs.median),
        ),
      );
    }
    out.push(
      mdTable(
        [
          'framework',
          'route',
          'req/s (median)',
          '÷ without (median over windows, min–max)',
          "app's CPU per request",
          'added (median over windows)',
          'latency p50',
          'p99',
        ],
        rows,
      ),
      '',
    );
    const any = summary.throughput[names[0]];
    out.push(
      `Per framework, ${any.processes} fresh app processes (\`bench/gate-app.mjs\`), one after the other, the ` +
        'frameworks alternating; each serves `GET /plain` (the handler alone: it reads who asks, the `x-account` header, ' +
        'as a route of a signed-in user reads its session, then `res.json(…)` / `c.json(…)` of a small object; ' +
        "behind the gate, the gate's `account` reads that same header and the handler takes who asks from the " +
        "decision, `res.locals.billing` / `c.get('billing')`, as the guide shows: every route reads the session once, " +
        "and that read is the app's cost, not the gate's), `GET /noop` (the " +
        'same handler behind a middleware that only waits one microtask: what any async ' +
        'middleware costs there), `GET /gated` (the same route behind `gate.express(need)` / `gate.hono(need)`, need ' +
        "`{ subscription: 'pro-plan', tier: 'pro' }`) and `GET /wrapped` (the same route and need as one handler, " +
        '`gate.express(need, handler)` / `gate.hono(need, handler)`: no middleware chain). A fresh load process per app ' +
        "(`bench/gate-load.mjs`, undici's " +
        `\`Pool\`: ${CONCURRENCY} requests in flight, each on its own keep-alive connection) checks the answers (200 ` +
        "with the same body on every route for `acct_active`; for `acct_past_due`, 303 to the mock's hosted tier page " +
        'for a navigation and 402 `application/problem+json` whose `upgrade_url` is that same link for an API client), ' +
        `warms up for ${fmtNum(meta.warmupMs / 1000, 1)} s, then runs ${BLOCKS} blocks of windows of ${WINDOW_REQUESTS.express} requests in Express, ${WINDOW_REQUESTS.hono} in Hono (about 30 ms each) in ` +
        'the order plain, wrapped, plain, no-op, middleware, no-op, plain, denied (a navigation of `acct_past_due`). ' +
        "Short windows and a ratio against neighbours only: this VM's speed changes within a tenth of a second (the " +
        "app's CPU per request of the same route differs up to 2× between windows 100 ms apart; the host's load, not " +
        "the app's), so each window of a gated kind is divided by the mean of the nearest window of its baseline " +
        'before and after it (the wrapped route and the middleware sit between two of theirs; a denied navigation between ' +
        'the plain windows of its block and the next). The table shows the median over every such window of all ' +
        `processes (${any.windows} windows per framework), and its min–max; the goal lines add each process's own median. ` +
        "The app's CPU per request is its " +
        "`process.cpuUsage()` over the window (read from a control route before and after) ÷ the window's requests, " +
        'and the added CPU is taken against the same neighbours; ' +
        'the latency is per request, at the load process, over every request of a window (median of windows). ' +
        'The load process shares the 2 cores with the app, so req/s is what this machine serves with its client ' +
        'beside it, and the ratio compares like with like.',
      '',
      `The service while measured: each app process asked the mock for the status of each account once and ` +
        `resolved the paywall link once (${names.map((n) => `${FRAMEWORK_LABEL[n]}: resolves per process ${summary.throughput[n].resolves.join(', ')}, status requests ${summary.throughput[n].statuses.join(', ')}`).join('; ')}), ` +
        `then ${fmtInt(summary.denied)} denied navigations were answered from memory with the link reused ` +
        '(the load process fails the run when a count moved while measuring). Answers and links are kept an hour ' +
        '(`ttlMs`, `denyTtlMs`, `staleMs`, `paywall.linkTtlMs`), longer than the run.',
      '',
    );
  }

  if (summary.percall) {
    const p = summary.percall;
    out.push('### `gate.check` per call', '');
    out.push(
      mdTable(
        ['call', 'mean', 'p50', 'p99 (median of children)', 'p99 worst child', 'p99.9', 'max'],
        Object.entries(CALLS).map(([k, label]) => [
          label,
          fmtNs(p[k].mean.median),
          fmtNs(p[k].p50.median),
          fmtNs(p[k].p99.median),
          fmtNs(p[k].p99.max),
          fmtNs(p[k].p999.median),
          fmtNs(p[k].max.max),
        ]),
      ),
      '',
      `${data.percall.length} fresh children (\`bench/gate-child.mjs\`), each with the embedded mock, one access cache ` +
        "and two gates on it (one reading a Fetch `Request`'s headers, one a Node-style `{ method, headers }` as " +
        'Express hands it over; the same `account` and `paywall.email` from the `x-account` and `x-email` headers). ' +
        "Every call is checked once before and once after timing (allowed with `source: 'cache'`; denied " +
        "`'inactive'` with 402, or 303 to the mock's hosted page), and the mock counted 2 status requests and 1 resolve " +
        `in each child, all before timing. After ${PERCALL.warmupMs / 1000} s of untimed warm-up, ${PERCALL.blocks} ` +
        `blocks of ${fmtInt(PERCALL.calls)} awaited calls of each kind, the order rotated each block, every call timed ` +
        "on its own: `t0 = process.hrtime.bigint(); await call(); t = process.hrtime.bigint() − t0` (the timer's own " +
        'cost included). The request objects are made once; a denied call builds its `Response` (the problem body, or ' +
        "the redirect) each time, as it must. The goal's p99 is judged on the worst child of both allowed calls.",
      '',
      "The gate's synchronous path, in the same children after the calls above: an allowed request answered from " +
        'memory through the handler wrapped, with a stand-in context (Hono: `{ req: { raw }, res, set }`; Express: ' +
        '`req`, `res`, `next`) and a handler that returns a `Response` made once, against reading who asks alone ' +
        "(`request.headers.get('x-account')`, what the route does without the gate). Each call is too short to " +
        'time alone, so 15 blocks of 100,000 calls of each are timed whole (in turn); median of blocks, median of ' +
        `children: reading who asks ${fmtNum(p.sync.readAccount.median, 0)} ns, \`gate.hono(need, handler)(c)\` ` +
        `${fmtNum(p.sync.honoWrapped.median, 0)} ns, \`gate.express(need, handler)(req, res, next)\` ` +
        `${fmtNum(p.sync.expressWrapped.median, 0)} ns.`,
      '',
    );
  }
  out.push(
    '### Frameworks',
    '',
    Object.entries(data.versions)
      .map(([pkg, v]) => `${pkg} ${v}`)
      .join('; ') + '.',
    '',
  );
  out.push(...sectionFoot('gate', meta, ['billing-sdk']));
  return `${out.join('\n')}\n`;
}

/** A terminal summary. */
export function renderGateCompact(summary) {
  const out = ['', 'Gate:'];
  for (const [framework, s] of Object.entries(summary.throughput)) {
    out.push(
      `  ${framework}: plain ${fmtInt(s.per.plain.rps.median)}, wrapped ${fmtInt(s.per.wrapped.rps.median)}, ` +
        `gated ${fmtInt(s.per.gated.rps.median)}, denied ${fmtInt(s.per.denied.rps.median)} req/s; CPU ` +
        `${signedUs(s.wrappedCpuAddedUs.median)}/request wrapped, ${signedUs(s.cpuAddedUs.median)} as a middleware`,
    );
  }
  out.push(...compactGoals(summary.goals));
  return `${out.join('\n')}\n`;
}
