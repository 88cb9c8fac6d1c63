// The tracker mode of the bench (`npm run bench -- --tracker`, issue 19): billing-sdk's
// `createUsageTracker` against `usage.record` / `usage.recordMany`, each measurement in a fresh child
// (tracker-child.mjs) against the bench server's usage ledger (server.mjs with its workload routes;
// each child sets the latency it needs: none for the per-call comparison, --latency for the rest).
// This file runs them (runTracker), turns them into goals (summarizeTracker) and renders the "Usage
// tracker" section of RESULTS.md, between `<!-- tracker:start -->` and `<!-- tracker:end -->`.
import { fileURLToPath } from 'node:url';
import { fmtNs, perCallChildren, perCallMethod, perCallTable, summarizePerCall } from './percall.mjs';
import { fmtInt, fmtNum, fmtRatio, mdTable, median, stats } from './report.mjs';
import { compactGoals, firstLine, sectionFoot, sectionHead } from './sections.mjs';
import { modeRunner } from './spawn.mjs';

const childPath = fileURLToPath(new URL('./tracker-child.mjs', import.meta.url));

export const TRACKER_GOALS = {
  /** `usage.record` over loopback ÷ `track` into memory, per call: at least */
  ratio: 100,
  /** sustained `track` calls into a file spool, events/s: at least */
  fileEventsPerSec: 20_000,
};
/** Parts of the tracker run, for --skip. */
export const TRACKER_PARTS = ['percall', 'throughput', 'drain', 'aggregate'];

const PERCALL = { blocks: 10, slowCalls: 500, fastCalls: 2000, warmupMs: 2000 };
/** Concurrent callers of the file-spool runs; the goal is read at the fastest. */
const CALLERS = [16, 256, 1024];
const THROUGHPUT = { ms: 5000, warmupMs: 1000 };
const CONCURRENCY = 16;
/** The drain runs, in the table's order. */
const DRAINS = [
  { mode: 'many', how: `\`recordMany(events, { concurrency: ${CONCURRENCY} })\`` },
  {
    mode: 'tracker',
    how: `\`track\` each (memory spool, \`concurrency: ${CONCURRENCY}\`), then \`flush()\``,
  },
  {
    mode: 'tracker-file',
    how: `\`track\` each (\`fileSpool(dir)\`, \`concurrency: ${CONCURRENCY}\`), then \`flush()\``,
  },
];
const AGGREGATE = { events: 5000, rate: 1000, windowMs: 500 };
/** The sender's default concurrency (the throughput run keeps it). */
const DEFAULT_CONCURRENCY = 8;

/**
 * @param {object} o
 * @param {number} o.port
 * @param {string} o.cwd
 * @param {(msg: string) => void} o.log
 * @param {number} o.rounds     per-call children, and drain pairs
 * @param {number} o.events     events of the drain (10 000)
 * @param {number} o.latencyMs  server latency of the throughput, drain and aggregation runs
 * @param {Set<string>} o.skip
 */
export async function runTracker(o) {
  const data = {
    latencyMs: o.latencyMs,
    percall: [],
    throughput: [],
    drain: [],
    aggregate: [],
    failures: {},
  };
  const { child, attempt } = modeRunner({ ...o, script: childPath, failures: data.failures });

  // --expose-gc: the child also weighs a queued event.
  await attempt('percall', () =>
    perCallChildren({
      ...o,
      child,
      options: PERCALL,
      into: data.percall,
      names: ['usage.record', 'track'],
      gc: true,
    }),
  );
  await attempt('throughput', async () => {
    for (const callers of CALLERS) {
      const r = await child(
        { kind: 'throughput', callers, ...THROUGHPUT, latencyMs: o.latencyMs },
        THROUGHPUT.ms + 120_000,
        `file spool, ${callers} callers`,
      );
      data.throughput.push(r);
      o.log(
        `file spool, ${callers} callers: ${fmtInt(r.eventsPerSec)} events/s, ${fmtNum(r.tracked / r.commits, 0)} per fdatasync`,
      );
    }
  });
  await attempt('drain', async () => {
    const modes = DRAINS.map((d) => d.mode);
    for (let round = 0; round < o.rounds; round++) {
      // Rotated each round, so none always runs first or after the same neighbour.
      for (const mode of modes.map((_, i) => modes[(i + round) % modes.length])) {
        const r = await child(
          { kind: 'drain', mode, events: o.events, concurrency: CONCURRENCY, latencyMs: o.latencyMs },
          60_000 + o.events * 20,
          `drain ${mode}`,
        );
        data.drain.push({ ...r, round });
        o.log(`drain ${round + 1}/${o.rounds} ${mode}: ${fmtInt(o.events)} events in ${fmtInt(r.ms)} ms`);
      }
    }
  });
  await attempt('aggregate', async () => {
    for (const windowMs of [0, AGGREGATE.windowMs]) {
      const r = await child(
        { kind: 'aggregate', ...AGGREGATE, windowMs, concurrency: CONCURRENCY, latencyMs: o.latencyMs },
        120_000,
        `aggregate ${windowMs}`,
      );
      data.aggregate.push(r);
      o.log(`aggregation ${windowMs ? `windowMs ${windowMs}` : 'off'}: ${r.server.requests} requests`);
    }
  });
  return data;
}

/** The ledger says every one of `n` events (quantity i + 1) was recorded exactly once. */
const exactlyOnce = (s, n) =>
  s.distinctKeys === n &&
  s.distinctQuantities === n &&
  s.doubledQuantities === 0 &&
  s.quantitySum === (n * (n + 1)) / 2;

/** Everything the report shows, computed once. @param {Awaited<ReturnType<typeof runTracker>>} data */
export function summarizeTracker(data) {
  const goals = [];
  const f = data.failures;
  const failed = (part, what) =>
    f[part] && goals.push({ ok: false, text: `${what} failed: ${firstLine(f[part])}` });

  let percall = null;
  if (data.percall.length) {
    percall = summarizePerCall(data.percall);
    goals.push({
      ok: percall.ratio.median >= TRACKER_GOALS.ratio,
      text:
        `\`tracker.track\` into memory ${fmtNum(percall.fastUs.median)} µs per call (mean) on the caller's path (p50 ` +
        `${fmtNum(percall.fastP50.median)} µs, p99 ${fmtNum(percall.fastP99.median)} µs) vs \`usage.record\` over ` +
        `loopback ${fmtNum(percall.slowUs.median, 1)} µs: ${fmtRatio(percall.ratio)} less (goal ≥ ${TRACKER_GOALS.ratio}×; ` +
        `p50 ÷ p50: ${fmtRatio(percall.medianRatio)})`,
    });
  }
  failed('percall', 'per-call comparison');

  const top = [...data.throughput].sort((a, b) => b.eventsPerSec - a.eventsPerSec)[0];
  if (top) {
    goals.push({
      ok: top.eventsPerSec >= TRACKER_GOALS.fileEventsPerSec,
      text:
        `file spool (group commit), ${top.callers} concurrent callers: ${fmtInt(top.eventsPerSec)} events/s sustained ` +
        `over ${fmtNum(top.elapsedMs / 1000, 0)} s, ${fmtNum(top.tracked / top.commits, 0)} events per fdatasync; ` +
        `\`track\` p50 ${fmtNs(top.latency.p50)}, p99 ${fmtNs(top.latency.p99)} ` +
        `(goal ≥ ${fmtInt(TRACKER_GOALS.fileEventsPerSec)} events/s)`,
    });
    const lost = data.throughput.filter((r) => r.serverRecorded + r.left < r.total);
    goals.push({
      ok: lost.length === 0,
      text:
        'nothing lost at close: every event tracked into the file spool was recorded by the server or read back from ' +
        `the spool's file by a new \`fileSpool\` (${data.throughput
          .map((r) => `${fmtInt(r.serverRecorded)} + ${fmtInt(r.left)} of ${fmtInt(r.total)}`)
          .join('; ')})`,
    });
  }
  failed('throughput', 'file-spool throughput');

  let drain = null;
  const many = data.drain.filter((r) => r.mode === 'many');
  if (many.length) {
    // Per round: each run's time ÷ recordMany's of the same round.
    const rows = DRAINS.map((d) => {
      const runs = data.drain.filter((r) => r.mode === d.mode);
      const ratios = runs.flatMap((r) => {
        const m = many.find((x) => x.round === r.round);
        return m ? [r.ms / m.ms] : [];
      });
      return { ...d, ms: stats(runs.map((r) => r.ms)), ratio: stats(ratios) };
    }).filter((r) => r.ms.n > 0);
    const n = many[0].events;
    drain = { rows, events: n };
    const [m, mem, file] = ['many', 'tracker', 'tracker-file'].map((mode) =>
      rows.find((r) => r.mode === mode),
    );
    const timeOf = (r, what) =>
      r ? `${what} ${fmtMs(r.ms.median)} (${fmtRatio(r.ratio)} recordMany's)` : '';
    goals.push({
      ok: data.drain.every((r) => exactlyOnce(r.server, r.events) && r.failed === 0),
      text:
        `drain of ${fmtInt(n)} events at ${data.latencyMs} ms per response, concurrency ${CONCURRENCY}: ` +
        `\`recordMany\` ${fmtMs(m.ms.median)}; ${[timeOf(mem, 'the tracker (memory spool)'), timeOf(file, 'with a file spool')].filter(Boolean).join('; ')}; ` +
        `every run recorded each event exactly once (goal: ${fmtInt(n)} distinct keys and quantities, 0 doubled, 0 failed)`,
    });
  }
  failed('drain', 'drain');

  let aggregate = null;
  const off = data.aggregate.find((r) => !r.windowMs);
  const on = data.aggregate.find((r) => r.windowMs);
  if (off && on) {
    aggregate = { off, on };
    const n = off.events;
    goals.push({
      ok: off.server.quantitySum === n && on.server.quantitySum === n && on.stats.recorded === n,
      text:
        `aggregation: ${fmtInt(n)} unit events on one meter sent ${fmtInt(off.server.requests)} requests without ` +
        `\`aggregate\`, ${fmtInt(on.server.requests)} with \`aggregate: { windowMs: ${on.windowMs} }\` ` +
        `(${fmtNum(off.server.requests / on.server.requests, 0)}× fewer); recorded totals ${fmtInt(off.server.quantitySum)} ` +
        `and ${fmtInt(on.server.quantitySum)} (goal: both ${fmtInt(n)})`,
    });
  }
  failed('aggregate', 'aggregation');
  return { goals, percall, drain, aggregate };
}

const fmtMs = (x) => (Number.isFinite(x) ? `${fmtInt(x)} ms` : '–');

/**
 * The "Usage tracker" section, markers included.
 * @param {Awaited<ReturnType<typeof runTracker>>} data
 * @param {ReturnType<typeof summarizeTracker>} summary
 * @param {object} meta  date, command, latencyMs, events, totalSeconds, machine, node, versions, distChanged
 */
export function renderTrackerMarkdown(data, summary, meta) {
  const out = sectionHead({
    name: 'tracker',
    title: 'Usage tracker',
    about:
      "`createUsageTracker` from the built package against `usage.record` / `usage.recordMany`, on the bench's " +
      "server's usage ledger (its own process, keep-alive): no added latency for the per-call comparison " +
      `(loopback), ${meta.latencyMs} ms per answer for the rest (a network's round trip).`,
    goals: summary.goals,
    meta,
  });

  if (summary.percall) {
    out.push("### `track` vs `usage.record` on the caller's path", '');
    out.push(
      perCallTable(data.percall, '`usage.record`', '`tracker.track` (memory)'),
      '',
      'Each child has one `BillingClient` and one tracker with the default memory spool (concurrency 8); ' +
        'record and track write to accounts of their own. ' +
        perCallMethod({
          children: data.percall.length,
          ...PERCALL,
          slow: "`billing.usage.record({ account_ref_id, product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1 })`",
          fast: '`tracker.track(…)` (the same event on another account)',
          timerNs: data.percall[0].timerOverhead.p50,
        }) +
        ' After each block pair, untimed, `tracker.flush()` sends what the block tracked (the ledger then holds ' +
        'every tracked event, checked). A loop of awaited `track` calls never yields to the event loop (the memory ' +
        'append resolves in microtasks), so the sends happen in the flush, not inside the timed calls: what is timed ' +
        "is the caller's path alone. The mean is well above the p50: about 1 % of the calls take tens to hundreds " +
        'of µs (garbage collection, which also collects what the sends and records before left; the first calls ' +
        "after a flush, which start the sender's requests; this shared machine's other processes), and a queued " +
        'event holds ' +
        `${fmtInt(median(data.percall.map((r) => r.queuedBytes)))} bytes of heap until it is sent (heapUsed after ` +
        `\`gc()\` before and after ${fmtInt(PERCALL.fastCalls)} more \`track\` calls, in the same child).`,
      '',
    );
  }

  if (data.throughput.length) {
    out.push('### File spool: concurrent `track` calls, group commit', '');
    out.push(
      mdTable(
        [
          'concurrent callers',
          'events/s',
          '`track` p50',
          'p99',
          'p99.9',
          'max',
          'fdatasync calls',
          'events per fdatasync',
          'at close: recorded by the server + left in the file / tracked',
        ],
        data.throughput.map((r) => [
          String(r.callers),
          fmtInt(r.eventsPerSec),
          fmtNs(r.latency.p50),
          fmtNs(r.latency.p99),
          fmtNs(r.latency.p999),
          fmtNs(r.latency.max),
          fmtInt(r.commits),
          fmtNum(r.tracked / r.commits, 0),
          `${fmtInt(r.serverRecorded)} + ${fmtInt(r.left)} / ${fmtInt(r.total)}`,
        ]),
      ),
      '',
    );
    out.push(
      `Each row is a fresh child: \`createUsageTracker(billing, { spool: fileSpool(dir), maxQueued: 10_000_000 })\` ` +
        `(dir: a new directory under ${'`os.tmpdir()`'}, ext4 here, so \`fdatasync\` reaches the disk), and that many loops of ` +
        '`await tracker.track({ …, quantity: 1 })` on one account. After ' +
        `${THROUGHPUT.warmupMs / 1000} s untimed, a ${THROUGHPUT.ms / 1000} s window: events/s are the calls that ` +
        'completed in it; each call is timed with `process.hrtime.bigint()`; fdatasync calls are counted by wrapping ' +
        '`FileHandle.prototype.datasync` in the child (every append, ack and replace of the spool shares the group ' +
        `commit). The sender runs meanwhile, as in production, at its default ${DEFAULT_CONCURRENCY} requests in flight at ` +
        `${meta.latencyMs} ms each, far below the tracking rate: maxQueued is raised so that the spool's pace is ` +
        "measured, not the service's (with the default 100 000, `track` would wait for room once that many are queued). " +
        'Then `close({ timeoutMs: 0 })`, and a new `fileSpool(dir)` opens the file and counts the entries left: with ' +
        "the server's count they cover every tracked event (a send aborted by the close can be in both: it is replayed " +
        'under its key).',
      '',
    );
  }

  if (summary.drain) {
    const d = summary.drain;
    const n = d.events;
    out.push(
      `### Drain of ${fmtInt(n)} events at ${meta.latencyMs} ms per response, concurrency ${CONCURRENCY}`,
      '',
    );
    out.push(
      mdTable(
        ['run', 'wall time (median)', 'min–max', 'events/s', '÷ recordMany (per round)'],
        d.rows.map((r) => [
          r.how,
          fmtMs(r.ms.median),
          `${fmtMs(r.ms.min)} – ${fmtMs(r.ms.max)}`,
          fmtInt(n / (r.ms.median / 1000)),
          r.mode === 'many' ? '1' : fmtRatio(r.ratio),
        ]),
      ),
      '',
    );
    out.push(
      `${meta.rounds} rounds, each run in a fresh child, the order rotated every round. Event i has \`quantity: i + 1\` ` +
        'and no key of the caller (each side generates one per event): the server ledger read after the run shows ' +
        'each event recorded exactly once (distinct keys, distinct quantities and their sum, checked). Every run is ' +
        `warmed first (${CONCURRENCY} records and ${CONCURRENCY} tracks on another account, untimed). The floor is ` +
        `${fmtInt(n)} ÷ ${CONCURRENCY} × ${meta.latencyMs} ms = ${fmtMs((n / CONCURRENCY) * meta.latencyMs)}.`,
      '',
    );
  }

  if (summary.aggregate) {
    const { off, on } = summary.aggregate;
    out.push(`### Aggregation: ${fmtInt(off.events)} unit events on one meter`, '');
    out.push(
      mdTable(
        [
          'tracker',
          'requests sent',
          'recorded total',
          'tracker stats().recorded',
          'wall time (tracking, then flush)',
        ],
        [off, on].map((r) => [
          r.windowMs ? `\`aggregate: { windowMs: ${r.windowMs} }\`` : 'no `aggregate`',
          fmtInt(r.server.requests),
          fmtInt(r.server.quantitySum),
          fmtInt(r.stats.recorded),
          `${fmtMs(r.ms)} (${fmtMs(r.trackedMs)} tracking)`,
        ]),
      ),
      '',
      `Each run in a fresh child: ${fmtInt(AGGREGATE.rate)} \`track({ …, quantity: 1 })\` calls per second on one ` +
        `account and meter for ${fmtNum(off.events / AGGREGATE.rate, 0)} s (a 10 ms tick issues the calls due), then ` +
        `\`flush()\`; concurrency ${CONCURRENCY}, ${meta.latencyMs} ms per response, memory spool. Requests are the POSTs ` +
        'the server received for the account (its ledger), and the recorded total is the sum of the quantities it stored.',
      '',
    );
  }
  out.push(...sectionFoot('tracker', meta, ['billing-sdk']));
  return `${out.join('\n')}\n`;
}

/** A terminal summary. */
export function renderTrackerCompact(summary, meta) {
  return `${['', `Usage tracker (server latency ${meta.latencyMs} ms where not loopback):`, ...compactGoals(summary.goals)].join('\n')}\n`;
}
