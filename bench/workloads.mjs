// The workload mode of the bench (`npm run bench -- --workloads`): billing-sdk's concurrent pagination,
// `usage.recordMany` and rate-limit cooldown against the peers' own ways of doing the same, on a server
// that answers after a fixed latency (20 ms by default), each measurement in a fresh child
// (workload-child.mjs). This file runs them (runWorkloads), turns them into goals (summarizeWorkloads)
// and renders the "Workloads" section of RESULTS.md (renderWorkloadsMarkdown), which lives between two
// markers so that a normal run and a workloads run each rewrite only their own part (sections.mjs).
import { fileURLToPath } from 'node:url';
import { FLAT_LIMIT_BYTES } from './memory.mjs';
import { fmtBytes, fmtInt, fmtMiB, fmtNum, fmtRatio, mdTable, median, stats } from './report.mjs';
import { compactGoals, firstLine, sectionFoot, sectionHead } from './sections.mjs';
import { PAGE_SIZE, PAGES, WALK_PAGES } from './shared.mjs';
import { runChild } from './spawn.mjs';
import { PEERS } from './workload-clients.mjs';

const childPath = fileURLToPath(new URL('./workload-child.mjs', import.meta.url));

export const WORKLOAD_GOALS = {
  /** walk of 200 pages at concurrency 8 vs the fastest peer's auto-pagination: at least this much faster */
  walkRatio: 6,
  /** recordMany at concurrency 16 vs a sequential loop: at least this much faster */
  recordManyRatio: 12,
  /** requests per Retry-After window during a storm, after the client's first 429: at most */
  perWindow: 1,
};
/** Parts of the workload run, for --skip. */
export const WORKLOAD_PARTS = ['walk', 'events', 'faults', 'storm', 'heap'];
/** Clients of the workload run, for --only (billing-sdk is always kept). */
export const WORKLOAD_CLIENTS = ['billing-sdk', ...PEERS];

const WALK_CONCURRENCY = 8;
const EVENTS_CONCURRENCY = 16;
const STORM_LOOPS = 16;
const HEAP_CONCURRENCY = 8;
const HEAP_MARKS = [1, 100, 250, 500, 750, 1000];
/** At each mark the walk pauses this long (many round trips) before measuring, so its read-ahead is full. */
const HEAP_PAUSE_MS = 200;
/** Fault mode of the events workload: 5 % answered 503 before storing, 5 % stored then the connection dropped. */
const FAULTS = { fail: 0.05, drop: 0.05, seed: 42 };
/**
 * A request arriving within one more round trip (the latency, at least this) after the server wrote a
 * client's first 429 may have been sent before the client read it: the client may still be busy with
 * the 200s that arrived just before (on 2 loaded cores that takes a few ms). It counts in the burst, not
 * against the cooldown; a cooldown of 1 s is no less visible for it.
 */
const MIN_GRACE_MS = 5;

/** Labels of the walk rows. */
const WALKS = [
  {
    key: 'billing-sdk c=1',
    client: 'billing-sdk',
    concurrency: 1,
    how: '`list(…).pages({ concurrency: 1 })`',
  },
  {
    key: `billing-sdk c=${WALK_CONCURRENCY}`,
    client: 'billing-sdk',
    concurrency: WALK_CONCURRENCY,
    how: `\`list(…).pages({ concurrency: ${WALK_CONCURRENCY} })\``,
  },
  {
    key: 'openai',
    client: 'openai',
    concurrency: 1,
    how: "`for await (… of client.getAPIList('/invoices', CursorPage, { query: { limit: 20 } }))`",
  },
  {
    key: 'stripe',
    client: 'stripe',
    concurrency: 1,
    how: '`stripe.invoices.list({ limit: 20 }).autoPagingEach(…)`',
  },
];

/**
 * @param {object} o
 * @param {number} o.port
 * @param {string} o.cwd
 * @param {(msg: string) => void} o.log
 * @param {number} o.rounds    walk rounds
 * @param {number} o.events    usage events per run (2000)
 * @param {number} o.stormMs   storm length (10 000)
 * @param {string[]} o.clients workload clients kept (billing-sdk and peers)
 * @param {Set<string>} o.skip parts skipped
 */
export async function runWorkloads(o) {
  const data = { walks: [], walkFailures: {}, events: [], eventFailures: {}, storm: [], heap: null };
  const child = (options, timeoutMs, what, gc = false) =>
    runChild(childPath, { port: o.port, ...options }, { cwd: o.cwd, timeoutMs, what, gc });

  if (!o.skip.has('walk')) {
    const rows = WALKS.filter((w) => o.clients.includes(w.client));
    for (let round = 0; round < o.rounds; round++) {
      // Rotated by one each round, so no walk always runs first or right after the same neighbour.
      const order = rows.map((_, i) => rows[(i + round) % rows.length]);
      const line = [];
      for (const w of order) {
        if (data.walkFailures[w.key]) continue;
        try {
          const r = await child(
            { kind: 'walk', client: w.client, concurrency: w.concurrency },
            90_000,
            w.key,
          );
          data.walks.push({ key: w.key, round, ...r });
          line.push(`${w.key} ${Math.round(r.ms)} ms`);
        } catch (err) {
          data.walkFailures[w.key] = String(err.message ?? err);
          o.log(`walk ${w.key} FAILED, left out: ${data.walkFailures[w.key]}`);
        }
      }
      o.log(`walk round ${round + 1}/${o.rounds}: ${line.join(', ')}`);
    }
  }

  if (!o.skip.has('events') || !o.skip.has('faults')) {
    // recordMany on both sides of the (long) sequential loop, so a slow stretch of the machine shows.
    const runs = [];
    if (!o.skip.has('events')) runs.push('many', 'sequential', 'many');
    if (!o.skip.has('faults')) runs.push('faults');
    for (const mode of runs) {
      if (data.eventFailures[mode]) continue;
      const options = { kind: 'events', mode, events: o.events, concurrency: EVENTS_CONCURRENCY, ...FAULTS };
      // A sequential loop costs about 25 ms per event at 20 ms latency: bounded at 10× that.
      const timeoutMs = 30_000 + o.events * (mode === 'sequential' ? 250 : 50);
      try {
        const r = await child(options, timeoutMs, `events ${mode}`);
        data.events.push(r);
        o.log(`events ${mode}: ${o.events} in ${Math.round(r.ms)} ms`);
      } catch (err) {
        data.eventFailures[mode] = String(err.message ?? err);
        o.log(`events ${mode} FAILED: ${data.eventFailures[mode]}`);
      }
    }
  }

  if (!o.skip.has('storm')) {
    for (const client of o.clients) {
      try {
        const r = await child(
          { kind: 'storm', client, loops: STORM_LOOPS, stormMs: o.stormMs },
          o.stormMs + 30_000,
          `storm ${client}`,
        );
        const stats = await (await fetch(`http://127.0.0.1:${o.port}/__bench/storm-stats`)).json();
        const name = client === 'stripe' ? 'stripe-node' : client;
        data.storm.push({ ...r, ...stormWindows(stats, stats.arrivals[name] ?? []) });
        o.log(`storm ${client}: ${(stats.arrivals[name] ?? []).length} requests during ${o.stormMs} ms`);
      } catch (err) {
        data.storm.push({ client, error: String(err.message ?? err) });
        o.log(`storm ${client} FAILED: ${err.message ?? err}`);
      }
    }
  }

  if (!o.skip.has('heap')) {
    try {
      const walk = (walker) =>
        child(
          { kind: 'heap', walker, concurrency: HEAP_CONCURRENCY, marks: HEAP_MARKS, pauseMs: HEAP_PAUSE_MS },
          120_000,
          `heap walk (${walker})`,
          true,
        );
      data.heap = await walk('billing-sdk');
      data.heap.control = await walk('fetch');
      o.log(`heap walks: ${data.heap.pages} pages in ${Math.round(data.heap.ms)} ms (+ raw fetch control)`);
    } catch (err) {
      data.heap = { failed: String(err.message ?? err) };
      o.log(`heap walk FAILED: ${data.heap.failed}`);
    }
  }
  return data;
}

/**
 * A client's storm arrivals cut into Retry-After windows. The burst is every request that arrived
 * before the client could have acted on its first 429 (the server wrote it `latencyMs` after the first
 * arrival; plus one more round trip, see MIN_GRACE_MS); the windows start when that 429 was written.
 * Only whole windows before the storm's end count for the mean and max.
 * @param {{durationMs: number, retryAfterMs: number, latencyMs: number}} stats
 * @param {number[]} arrivals  ms since the storm started
 */
export function stormWindows(stats, arrivals) {
  const sorted = [...arrivals].sort((a, b) => a - b);
  if (sorted.length === 0) return { total: 0, burst: 0, windows: [], stormMs: stats.durationMs };
  const informedAt = sorted[0] + stats.latencyMs;
  const grace = Math.max(MIN_GRACE_MS, stats.latencyMs);
  const burst = sorted.filter((t) => t < informedAt + grace).length;
  const n = Math.floor((stats.durationMs - informedAt) / stats.retryAfterMs);
  const windows = new Array(Math.max(0, n)).fill(0);
  for (const t of sorted) {
    if (t < informedAt + grace) continue;
    const k = Math.floor((t - informedAt) / stats.retryAfterMs);
    if (k < n) windows[k]++;
  }
  return {
    total: sorted.length,
    burst,
    windows,
    stormMs: stats.durationMs,
    retryAfterMs: stats.retryAfterMs,
    informedAtMs: informedAt,
    graceMs: grace,
  };
}

/** Everything the report shows, computed once. @param {Awaited<ReturnType<typeof runWorkloads>>} data */
export function summarizeWorkloads(data) {
  const goals = [];
  const c8 = `billing-sdk c=${WALK_CONCURRENCY}`;

  // Walk: per round, the fastest peer of that round ÷ billing-sdk at c=8 of the same round.
  const walkRows = WALKS.filter(
    (w) => data.walks.some((s) => s.key === w.key) || data.walkFailures[w.key],
  ).map((w) => ({
    ...w,
    failed: data.walkFailures[w.key],
    ms: stats(data.walks.filter((s) => s.key === w.key).map((s) => s.ms)),
    items: data.walks.find((s) => s.key === w.key)?.items,
  }));
  const peerRows = walkRows.filter((r) => PEERS.includes(r.client) && !r.failed);
  const fastestPeer = peerRows.sort((a, b) => a.ms.median - b.ms.median)[0];
  const walkRatios = [];
  const rounds = [...new Set(data.walks.map((s) => s.round))];
  for (const round of rounds) {
    const mine = data.walks.find((s) => s.round === round && s.key === c8);
    const peers = data.walks.filter((s) => s.round === round && PEERS.includes(s.client));
    if (mine && peers.length) walkRatios.push(Math.min(...peers.map((p) => p.ms)) / mine.ms);
  }
  const walkRatio = stats(walkRatios);
  const c1 = walkRows.find((r) => r.key === 'billing-sdk c=1');
  const c8Row = walkRows.find((r) => r.key === c8);
  if (walkRows.length) {
    goals.push({
      ok: walkRatio.n ? walkRatio.median >= WORKLOAD_GOALS.walkRatio : null,
      text:
        `walk of ${WALK_PAGES} pages: billing-sdk at concurrency ${WALK_CONCURRENCY} ${fmtMs(c8Row?.ms.median)} vs the fastest peer's ` +
        `auto-pagination (${fastestPeer?.client ?? '–'}) ${fmtMs(fastestPeer?.ms.median)}: ${fmtRatio(walkRatio)} faster ` +
        `(goal ≥ ${WORKLOAD_GOALS.walkRatio}×)${c8Row?.failed ? `; billing-sdk c=${WALK_CONCURRENCY} failed: ${firstLine(c8Row.failed)}` : ''}`,
    });
  }

  // Events: the sequential loop ÷ recordMany (median of its runs).
  const seq = data.events.filter((e) => e.mode === 'sequential');
  const many = data.events.filter((e) => e.mode === 'many');
  const faults = data.events.find((e) => e.mode === 'faults');
  const eventsRatio =
    seq.length && many.length ? median(seq.map((e) => e.ms)) / median(many.map((e) => e.ms)) : Number.NaN;
  const manyRatios = many.map((m) => median(seq.map((e) => e.ms)) / m.ms);
  const ranEvents = seq.length || many.length || data.eventFailures.many || data.eventFailures.sequential;
  if (ranEvents) {
    const n = (seq[0] ?? many[0])?.events;
    const failure = data.eventFailures.many ?? data.eventFailures.sequential;
    goals.push({
      ok: Number.isFinite(eventsRatio) ? eventsRatio >= WORKLOAD_GOALS.recordManyRatio : null,
      text:
        `${fmtInt(n)} usage events: \`recordMany\` at concurrency ${EVENTS_CONCURRENCY} ${fmtMs(median(many.map((e) => e.ms)))} vs a sequential ` +
        `\`usage.record\` loop ${fmtMs(median(seq.map((e) => e.ms)))}: ${fmtRatio(stats(manyRatios))} faster ` +
        `(goal ≥ ${WORKLOAD_GOALS.recordManyRatio}×)${failure ? `; failed: ${firstLine(failure)}` : ''}`,
    });
  }
  let faultCheck = null;
  if (faults || data.eventFailures.faults) {
    if (faults) {
      const s = faults.server;
      const lost = faults.events - s.distinctQuantities;
      faultCheck = {
        lost,
        doubled: s.doubledQuantities,
        distinctKeys: s.distinctKeys,
        sumOk: s.quantitySum === (faults.events * (faults.events + 1)) / 2,
      };
      const ok =
        s.distinctKeys === faults.events && lost === 0 && s.doubledQuantities === 0 && faultCheck.sumOk;
      goals.push({
        ok,
        text:
          `\`recordMany\` under fault mode (${fmtInt(s.failed)} requests answered 503, ${fmtInt(s.dropped)} stored then the connection ` +
          `dropped): ${fmtInt(s.distinctKeys)} distinct event keys recorded of ${fmtInt(faults.events)}, ${fmtInt(lost)} events lost, ` +
          `${fmtInt(s.doubledQuantities)} doubled (goal: ${fmtInt(faults.events)}, 0, 0)`,
      });
    } else {
      goals.push({
        ok: false,
        text: `\`recordMany\` under fault mode failed: ${firstLine(data.eventFailures.faults)}`,
      });
    }
  }

  // Storm: requests per Retry-After window after the client's first 429.
  const stormRows = data.storm.map((s) => {
    if (s.error) return s;
    const w = s.windows ?? [];
    return {
      ...s,
      perWindowMax: w.length ? Math.max(...w) : Number.NaN,
      perWindowMean: w.length ? w.reduce((a, b) => a + b, 0) / w.length : Number.NaN,
    };
  });
  const sdkStorm = stormRows.find((s) => s.client === 'billing-sdk');
  if (sdkStorm) {
    const peers = stormRows
      .filter((s) => s.client !== 'billing-sdk' && !s.error)
      .map((s) => `${s.client} ${fmtNum(s.perWindowMean, 1)} (max ${fmtInt(s.perWindowMax)})`)
      .join(', ');
    goals.push({
      ok: sdkStorm.error ? false : sdkStorm.perWindowMax <= WORKLOAD_GOALS.perWindow,
      text: sdkStorm.error
        ? `429 storm: billing-sdk failed: ${firstLine(sdkStorm.error)}`
        : `429 storm of ${sdkStorm.stormMs / 1000} s, 16 concurrent loops: billing-sdk sent ${fmtNum(sdkStorm.perWindowMean, 1)} requests per ` +
          `Retry-After window (max ${fmtInt(sdkStorm.perWindowMax)}) after its first 429, vs ${peers || 'no peer'} ` +
          `(goal ≤ ${WORKLOAD_GOALS.perWindow} per window per client)`,
    });
  }

  // Heap: pages held (counted), and heap growth against the raw-fetch control walking the same way.
  let heap = null;
  if (data.heap && !data.heap.failed) {
    const h = data.heap;
    const at = (series, p) => series.find((r) => r.page === p)?.heapUsed ?? Number.NaN;
    const rows = h.series.map((s) => ({ ...s, control: at(h.control.series, s.page) }));
    const maxHeld = Math.max(...rows.map((r) => r.held));
    const maxAhead = Math.max(...rows.map((r) => r.ahead));
    const maxAlive = Math.max(...rows.map((r) => r.handedOutAlive.length));
    const growth = at(h.series, 1000) - at(h.series, 100);
    const controlGrowth = at(h.control.series, 1000) - at(h.control.series, 100);
    heap = { ...h, rows, maxHeld, maxAhead, maxAlive, growth, controlGrowth };
    goals.push({
      ok: maxHeld <= HEAP_CONCURRENCY + 1,
      text:
        `pages held walking ${PAGES} pages at concurrency ${HEAP_CONCURRENCY}: at most ${maxHeld} at any mark (the one in hand, up to ` +
        `${maxAhead} loaded ahead, up to ${maxAlive} already handed out but not collectable) (goal ≤ ${HEAP_CONCURRENCY + 1})`,
    });
    goals.push({
      ok: growth - controlGrowth <= FLAT_LIMIT_BYTES,
      text:
        `heap flat over that walk: heap after GC grew ${fmtBytes(growth)} from page 100 to 1000, raw fetch walking the same ` +
        `pages the same way ${fmtBytes(controlGrowth)}: ${fmtBytes(growth - controlGrowth)} more (goal ≤ ${fmtBytes(FLAT_LIMIT_BYTES)} ` +
        `more, as in the normal run's memory test; one page is ${fmtKiB(h.pageHeapBytes)} of heap)`,
    });
  } else if (data.heap?.failed) {
    goals.push({
      ok: false,
      text: `memory walk at concurrency ${HEAP_CONCURRENCY} failed: ${firstLine(data.heap.failed)}`,
    });
  }

  return {
    goals,
    walkRows,
    walkRatio,
    fastestPeer,
    c1,
    c8Row,
    seq,
    many,
    faults,
    faultCheck,
    stormRows,
    heap,
  };
}

const fmtMs = (x) => (Number.isFinite(x) ? `${Math.round(x).toLocaleString('en-US')} ms` : '–');
const fmtKiB = (b) => (Number.isFinite(b) ? `${(b / 1024).toFixed(1)} KiB` : '–');

/**
 * The "Workloads" section, markers included.
 * @param {Awaited<ReturnType<typeof runWorkloads>>} data
 * @param {ReturnType<typeof summarizeWorkloads>} summary
 * @param {object} meta  date, command, latencyMs, rounds, totalSeconds, machine, node, versions, distChanged
 */
export function renderWorkloadsMarkdown(data, summary, meta) {
  const out = sectionHead({
    name: 'workloads',
    title: 'Workloads',
    about:
      `The server answers every API request after ${meta.latencyMs} ms (a network's round trip); everything ` +
      'else is as in the normal run (own process, loopback, keep-alive, precomputed bodies).',
    goals: summary.goals,
    meta,
  });

  if (summary.walkRows.length) {
    out.push(`### Walk of ${WALK_PAGES} pages (${fmtInt(WALK_PAGES * PAGE_SIZE)} invoices)`, '');
    const c8 = summary.c8Row?.ms.median;
    out.push(
      mdTable(
        ['client', 'how', 'wall time (median)', 'min–max', 'items', `÷ billing-sdk c=${WALK_CONCURRENCY}`],
        summary.walkRows.map((r) =>
          r.failed
            ? [r.key, r.how, `failed: ${firstLine(r.failed)}`, '', '', '']
            : [
                r.key,
                r.how,
                fmtMs(r.ms.median),
                `${fmtMs(r.ms.min)} – ${fmtMs(r.ms.max)}`,
                fmtInt(r.items),
                `${fmtNum(r.ms.median / c8)}×`,
              ],
        ),
      ),
      '',
    );
    out.push(
      `${meta.rounds} rounds, each walk in a fresh child, the order rotated each round. Each child loads the first page once, ` +
        'untimed (connection, JIT), then times the whole walk; every item is checked (an invoice, `invoice_date` strictly ' +
        `increasing across the list, ${fmtInt(WALK_PAGES * PAGE_SIZE)} distinct ids). The goal's ratio is taken per round (fastest ` +
        'peer of the round ÷ billing-sdk at c=8 of the same round), median with min–max. At concurrency 1 every paginator ' +
        `pays one round trip per page (${WALK_PAGES} × ${meta.latencyMs} ms + its CPU); billing-sdk at c=8 reads \`count\` ` +
        `from page 1, then keeps ${WALK_CONCURRENCY} pages in flight and yields them in order.`,
      '',
    );
  }

  if (summary.seq.length || summary.many.length || summary.faults) {
    out.push('### Usage events', '');
    const rows = [...summary.many.slice(0, 1), ...summary.seq, ...summary.many.slice(1)];
    if (summary.faults) rows.push(summary.faults);
    out.push(
      mdTable(
        [
          'run',
          'wall time',
          'events/s',
          'ok / failed',
          'server: distinct keys',
          'replays answered idempotent',
          'lost',
          'doubled',
        ],
        rows.map((e) => [
          e.mode === 'sequential'
            ? '`for … await usage.record(e)`'
            : `\`recordMany(events, { concurrency: ${e.concurrency} })\`${e.mode === 'faults' ? ' under fault mode' : ''}`,
          fmtMs(e.ms),
          fmtInt(e.events / (e.ms / 1000)),
          `${fmtInt(e.ok)} / ${fmtInt(e.failed)}${thrownNames(e.errors)}`,
          fmtInt(e.server.distinctKeys),
          fmtInt(e.server.replays),
          fmtInt(e.events - e.server.distinctQuantities),
          fmtInt(e.server.doubledQuantities),
        ]),
      ),
      '',
    );
    const failures = Object.entries(data.eventFailures);
    for (const [mode, why] of failures) out.push(`- ${mode}: failed: ${firstLine(why)}`);
    // Events that recordMany reported as failed: what the caller was told.
    const told = rows.flatMap((e) => (e.messages ?? []).map((m) => `${e.mode}: ${m}`));
    for (const m of told) out.push(`- reported failed to the caller, ${m}`);
    if (failures.length || told.length) out.push('');
    out.push(
      'Each run in a fresh child writes its own account, so the server ledger read after it is that run’s alone. Event i has ' +
        '`quantity: i + 1` and no `event_key` (billing-sdk generates one per event and must keep it across retries): the server ' +
        'stores each event_key once (a replay is answered `idempotent: true` and stores nothing), and counts an event lost when ' +
        'no key recorded its quantity, doubled when two keys did (an event reported failed to the caller but recorded is ' +
        'neither: the caller holds its event_key, and resubmitting it is answered `idempotent: true`). recordMany runs ' +
        'before and after the sequential loop; the ' +
        'ratio is the sequential time ÷ each recordMany time (median, min–max). ' +
        `Fault mode: a seeded ${FAULTS.fail * 100} % of the POSTs are answered 503 before anything is stored and ${FAULTS.drop * 100} % ` +
        'are stored and then the connection is destroyed before the answer; the client is built with `maxRetries: 4, ' +
        'retryDelay: () => 50` so retries cannot run out at that fault rate and the run stays short (the defaults are 2 retries ' +
        'and about 0.5 s doubling).',
      '',
    );
  }

  if (summary.stormRows.length) {
    const s0 = summary.stormRows.find((s) => !s.error);
    out.push(
      `### 429 storm (${(s0?.stormMs ?? 0) / 1000} s, every balance request answered 429 with \`Retry-After: 1\`)`,
      '',
    );
    out.push(
      mdTable(
        [
          'client',
          'retries',
          'requests during the storm',
          'burst before its first 429',
          'per 1 s window after it: mean',
          'max',
          'windows',
          'calls made during the storm: resolved / thrown',
        ],
        summary.stormRows.map((s) =>
          s.error
            ? [s.client, '', `failed: ${firstLine(s.error)}`, '', '', '', '', '']
            : [
                s.client,
                STORM_RETRIES[s.client] ?? '',
                fmtInt(s.total),
                fmtInt(s.burst),
                fmtNum(s.perWindowMean, 1),
                fmtInt(s.perWindowMax),
                s.windows.join(' '),
                `${fmtInt(s.during.ok)} / ${fmtInt(s.during.thrown)}${thrownNames(s.errors)}`,
              ],
        ),
      ),
      '',
    );
    out.push(
      `Each client in a fresh child runs ${STORM_LOOPS} concurrent loops of \`balance\` calls (\`while (…) try { await call() } catch {}\`); ` +
        '300 ms after they start, the storm begins, and the loops stop 1.5 s after it ends. The server counts the requests that ' +
        'arrive during the storm per `x-bench-client` header. The burst is every request that arrived before the client could ' +
        `have acted on its first 429: until one more round trip (${meta.latencyMs} ms) after the server wrote it (the first arrival + ` +
        `${meta.latencyMs} ms latency): requests already in flight, or sent while the client was still reading the 200s that came ` +
        'just before, which no client can hold back. From then on the storm is cut into 1 s (Retry-After) windows; ' +
        'only whole windows count. The last column is what the app saw of the calls it made while the storm was on: how ' +
        'many resolved (after waiting it out) and how many threw.',
      '',
    );
  }

  if (summary.heap) {
    const h = summary.heap;
    out.push(`### Memory walking ${PAGES} pages at concurrency ${HEAP_CONCURRENCY}`, '');
    out.push(
      mdTable(
        [
          'page',
          'pages held',
          'in hand + loaded ahead',
          'handed out, not collectable',
          'billing-sdk heapUsed after GC',
          'raw fetch control heapUsed',
        ],
        h.rows.map((r) => [
          String(r.page),
          String(r.held),
          `1 + ${r.ahead}`,
          r.handedOutAlive.length ? `${r.handedOutAlive.length} (page ${r.handedOutAlive.join(', ')})` : '0',
          fmtMiB(r.heapUsed),
          fmtMiB(r.control),
        ]),
      ),
      '',
    );
    out.push(
      `\`for await (const page of billing.invoices.list({ account_ref_id: 'acct_1', page_size: 20 }).pages({ concurrency: ${HEAP_CONCURRENCY} }))\` ` +
        `over ${PAGES} pages (${fmtInt(h.items)} invoices, ${fmtMs(h.ms)} including the pauses) in a child run with \`--expose-gc\`. ` +
        `At each marked page the loop first pauses ${HEAP_PAUSE_MS} ms (many round trips: the read-ahead fills as far as the ` +
        'walk lets it), then runs `gc()` and reads `heapUsed`. Pages held = the one in hand + pages loaded ahead (exact: the ' +
        'client is given a `fetch` that counts list responses received; ahead = received − handed out) + pages already ' +
        'handed out that cannot be collected yet (exact: a FinalizationRegistry on each page’s `results` drops its number ' +
        'once it is collected; the numbers are listed). The control walks the same pages with raw fetch + JSON.parse and the ' +
        `same ${HEAP_CONCURRENCY}-wide sliding window, keeping nothing, in its own child: heap after GC moves by some hundreds of KiB ` +
        'even there (V8 compiling, lazily swept undici/AbortSignal state), more than the pages themselves ' +
        `(${fmtKiB(h.pageHeapBytes)} of heap per page, measured by parsing 50 different pages in the same child), which is why ` +
        'pages are counted rather than inferred from the heap.',
      '',
    );
  } else if (data.heap?.failed) {
    out.push(`### Memory walking ${PAGES} pages`, '', `failed: ${firstLine(data.heap.failed)}`, '');
  }

  out.push(...sectionFoot('workloads', meta, ['billing-sdk', 'openai', 'stripe']));
  return `${out.join('\n')}\n`;
}

/** ` (RateLimitError)`: the errors thrown to the app. @param {Record<string, number>} errors */
const thrownNames = (errors) => {
  const names = Object.keys(errors ?? {});
  return names.length ? ` (${names.join(', ')})` : '';
};

/** How each client retries in the storm: their defaults. */
const STORM_RETRIES = {
  'billing-sdk': 'defaults: 2 retries; a 429 pauses the whole client for Retry-After',
  openai: 'defaults: 2 retries, each after Retry-After',
  stripe: 'defaults: 2 retries, but none on a 429; Retry-After ignored',
};

/** A terminal summary of the workloads. */
export function renderWorkloadsCompact(summary, meta) {
  const out = ['', `Workloads (server latency ${meta.latencyMs} ms):`];
  for (const r of summary.walkRows) {
    out.push(
      `  walk ${WALK_PAGES} pages  ${r.key.padEnd(16)} ${r.failed ? `failed: ${firstLine(r.failed)}` : fmtMs(r.ms.median)}`,
    );
  }
  for (const e of [...summary.many, ...summary.seq]) {
    out.push(
      `  ${fmtInt(e.events)} events  ${e.mode === 'many' ? `recordMany c=${e.concurrency}` : 'sequential loop'}  ${fmtMs(e.ms)}`,
    );
  }
  for (const s of summary.stormRows) {
    out.push(
      s.error
        ? `  storm ${s.client}: failed`
        : `  storm ${s.client.padEnd(12)} ${fmtInt(s.total)} requests, burst ${s.burst}, then ${fmtNum(s.perWindowMean, 1)}/window (max ${s.perWindowMax})`,
    );
  }
  out.push(...compactGoals(summary.goals));
  return `${out.join('\n')}\n`;
}
