// One workload measurement in a fresh process (started by workloads.mjs), like measure-child.mjs for
// the normal run. Usage: node [--expose-gc] workload-child.mjs '{"kind":"walk","client":"openai","port":1234,…}'
// Prints one line `BENCH_RESULT {json}`; exits 1 with the error on stderr when the workload failed
// (a wrong item count, an order error, a client error).
//
// Kinds:
//   walk    {client, concurrency}        the 200-page list with the client's own paginator, timed
//   events  {mode: sequential|many|faults, events, concurrency, fail, drop, seed}
//                                        usage events through billing-sdk; the server's ledger read after
//   storm   {client, loops, stormMs}     `loops` concurrent loops of balance calls; the child starts the
//                                        storm on the server once the loops run, stops after it ends
//   heap    {walker: billing-sdk|fetch, concurrency, marks, pauseMs}
//                                        a walk of the 1000-page list; heap after GC and pages held at marks
import {
  childMain,
  benchControl as control,
  METER,
  PAGE_SIZE,
  PAGES,
  PATH,
  SEARCH,
  sleep,
  WALK_PAGES,
} from './shared.mjs';
import { billingClient, stormCallers, walkers } from './workload-clients.mjs';

/** The timed walk of 200 pages; every item checked, in order. */
async function walk(o, t) {
  const walker = await walkers[o.client](t, o.concurrency ?? 1);
  await walker.warm();
  const ids = new Set();
  let items = 0;
  let lastDate = '';
  const onItem = (item) => {
    // invoice_date grows by one hour per invoice over the whole list: a page out of order, repeated or
    // skipped breaks the chain.
    if (typeof item.processor_invoice_id !== 'string' || !(String(item.invoice_date) > lastDate))
      throw new Error(`item ${items}: not an invoice, or out of order`);
    lastDate = String(item.invoice_date);
    ids.add(item.processor_invoice_id);
    items++;
  };
  const t0 = performance.now();
  const pages = await walker.walk(onItem);
  const ms = performance.now() - t0;
  const expected = WALK_PAGES * PAGE_SIZE;
  if (items !== expected || ids.size !== expected)
    throw new Error(`${o.client}: walked ${items} items (${ids.size} distinct), expected ${expected}`);
  if (pages !== null && pages !== WALK_PAGES) throw new Error(`${o.client}: ${pages} pages, expected 200`);
  return { client: o.client, concurrency: o.concurrency ?? 1, ms, items, pages };
}

/**
 * Usage events: `events` of them, event i with quantity i + 1 (so the server can tell every event
 * apart whatever key it arrives with) and no event_key (billing-sdk generates one per event and must
 * keep it across retries). Each run writes to an account of its own, so the ledger read after is this
 * run's alone.
 */
async function events(o, t) {
  const n = o.events;
  const account = `acct_ev_${o.mode}_${process.pid}`;
  const list = Array.from({ length: n }, (_, i) => ({ account_ref_id: account, ...METER, quantity: i + 1 }));
  const faults = o.mode === 'faults';
  if (faults) {
    const q = new URLSearchParams({
      account,
      fail: String(o.fail),
      drop: String(o.drop),
      seed: String(o.seed),
    });
    await control(t.origin, `/__bench/usage-config?${q}`);
  }
  // Fault mode: retries up to 4 (the default is 2) and 50 ms apart (the default starts at 0.5 s and
  // doubles), so a 10 % fault rate cannot exhaust an event's attempts and the run stays short.
  const billing = await billingClient(t, faults ? { maxRetries: 4, retryDelay: () => 50 } : {});
  if (o.mode !== 'sequential' && typeof billing.usage.recordMany !== 'function')
    throw new Error('this billing-sdk build has no usage.recordMany');
  // Untimed warm-up on another account: the connection, the JIT of the call path.
  await billing.usage.record({ account_ref_id: `acct_warm_${process.pid}`, ...METER, quantity: 1 });

  let ok = 0;
  let failed = 0;
  let replayed = 0;
  const errors = new Map();
  const messages = [];
  const t0 = performance.now();
  if (o.mode === 'sequential') {
    for (const event of list) {
      const r = await billing.usage.record(event);
      if (r.accepted !== true) throw new Error(`refused: ${JSON.stringify(r)}`);
      ok++;
    }
  } else {
    let progress = 0;
    const results = await billing.usage.recordMany(list, {
      concurrency: o.concurrency,
      onProgress: ({ done }) => {
        progress = done;
      },
    });
    if (results.length !== n) throw new Error(`recordMany returned ${results.length} results for ${n}`);
    results.forEach((r, i) => {
      if (r.ok) {
        if (r.result?.accepted !== true) throw new Error(`event ${i}: ${JSON.stringify(r.result)}`);
        if (r.result.recorded_quantity !== i + 1) throw new Error(`event ${i}: result of another event`);
        if (r.result.idempotent) replayed++;
        ok++;
      } else {
        failed++;
        const name = r.error?.name ?? String(r.error);
        errors.set(name, (errors.get(name) ?? 0) + 1);
        if (messages.length < 3)
          messages.push(`event ${i}: ${name}: ${r.error?.message ?? ''}`.slice(0, 300));
      }
    });
    if (progress !== n) throw new Error(`onProgress last reported ${progress} of ${n}`);
  }
  const ms = performance.now() - t0;
  const server = await control(t.origin, `/__bench/usage-stats?account=${account}`);
  return {
    mode: o.mode,
    concurrency: o.mode === 'sequential' ? 1 : o.concurrency,
    events: n,
    ms,
    ok,
    failed,
    replayed,
    errors: Object.fromEntries(errors),
    messages,
    server,
  };
}

/** `loops` concurrent loops of balance calls through a storm of `stormMs`. */
async function storm(o, t) {
  const call = await stormCallers[o.client](t);
  await call(); // proves the client reaches the server (no storm yet), and warms it
  // What the app saw of the calls it made during the storm (started between the control call's
  // answer and stormMs later, by the child's clock), however long they took to settle: resolved or
  // thrown, and the names of the errors thrown.
  const during = { ok: 0, thrown: 0 };
  const errors = new Map();
  let stormFrom = Number.POSITIVE_INFINITY;
  let stormTo = Number.POSITIVE_INFINITY;
  let stopped = false;
  const inStorm = () => {
    const t = performance.now();
    return t >= stormFrom && t < stormTo;
  };
  const loop = async () => {
    while (!stopped) {
      const made = inStorm();
      try {
        await call();
        if (made) during.ok++;
      } catch (err) {
        if (made) {
          during.thrown++;
          const name = err?.constructor?.name ?? String(err);
          errors.set(name, (errors.get(name) ?? 0) + 1);
        }
      }
    }
  };
  const loops = Array.from({ length: o.loops }, loop);
  // The storm starts while the loops run, as a real one would: requests are already in flight.
  await sleep(300);
  await control(t.origin, `/__bench/storm?ms=${o.stormMs}&retryAfter=1`);
  stormFrom = performance.now();
  stormTo = stormFrom + o.stormMs;
  await sleep(o.stormMs + 1500);
  stopped = true;
  // Calls still waiting (a client's own retry sleep) are not waited for beyond 5 s.
  await Promise.race([Promise.all(loops), sleep(5000)]);
  return { client: o.client, loops: o.loops, during, errors: Object.fromEntries(errors) };
}

/**
 * The pages of the 1000-page list, `concurrency` requested ahead, and a counter of list responses
 * received: billing-sdk's `.pages({ concurrency })` (its `fetch` counts), or the control: raw fetch +
 * JSON.parse with the same sliding window, keeping nothing else.
 * @returns {Promise<{pages: AsyncIterable<{page: number, results: unknown[]}>, received: () => number}>}
 */
async function pagesOf(walker, t, concurrency) {
  let received = 0;
  if (walker === 'fetch') {
    const init = { headers: { authorization: `Bearer ${t.apiKey}`, accept: 'application/json' } };
    const get = async (page) => {
      const res = await fetch(t.origin + t.path + t.search + (page === 1 ? '' : `&page=${page}`), init);
      received++;
      const text = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text}`);
      return JSON.parse(text);
    };
    await get(1); // warm, untimed
    received = 0;
    const pages = async function* () {
      const { count, results } = await get(1);
      yield { page: 1, results };
      const last = Math.ceil(count / PAGE_SIZE);
      const ahead = [];
      let requested = 1;
      for (let page = 2; page <= last; page++) {
        while (ahead.length < concurrency && requested < last) ahead.push(get(++requested));
        yield { page, results: (await ahead.shift()).results };
      }
    };
    return { pages: pages(), received: () => received };
  }
  const countingFetch = async (input, init) => {
    const res = await fetch(input, init);
    if (new URL(input.url ?? input).pathname === PATH) received++;
    return res;
  };
  const billing = await billingClient(t, { fetch: countingFetch });
  const params = { account_ref_id: t.query.account_ref_id, page_size: PAGE_SIZE };
  await billing.invoices.list(params); // warm, untimed
  received = 0;
  return { pages: billing.invoices.list(params).pages({ concurrency }), received: () => received };
}

/**
 * A walk of the 1000-page list at `concurrency`; at each marked page, after a pause that lets the
 * read-ahead fill, a full GC then heapUsed, and the pages held: the one in hand, those received and
 * not yet handed out, and those handed out but not yet collected. Then the heap cost of one page.
 */
async function heap(o, t) {
  const gc = globalThis.gc;
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  const { pages: walk, received } = await pagesOf(o.walker, t, o.concurrency);
  const marks = new Set(o.marks);
  const series = [];
  // Pages already handed out that are still alive: a FinalizationRegistry (not WeakRefs: V8 keeps a
  // WeakRef's target alive until the job that made it ends, which a page made just before a mark may
  // not have) removes each page's number once its results are collected.
  const alive = new Set();
  const registry = new FinalizationRegistry((n) => alive.delete(n));
  let pages = 0;
  let items = 0;
  const t0 = performance.now();
  for await (const page of walk) {
    pages++;
    if (page.page !== pages) throw new Error(`page ${page.page} came in position ${pages}`);
    items += page.results.length;
    if (marks.has(page.page)) {
      // A pause of many round trips first, so the read-ahead is as full as the walk lets it get.
      await sleep(o.pauseMs);
      const ahead = received() - pages;
      gc();
      const heapUsed = process.memoryUsage().heapUsed;
      await sleep(20); // the registry's callbacks for what gc() collected run as a task
      const handedOutAlive = [...alive];
      series.push({
        page: page.page,
        heapUsed,
        ahead,
        handedOutAlive,
        held: 1 + ahead + handedOutAlive.length,
      });
    }
    alive.add(page.page);
    registry.register(page.results, page.page);
  }
  const ms = performance.now() - t0;
  if (pages !== PAGES || items !== PAGES * PAGE_SIZE)
    throw new Error(`walked ${pages} pages / ${items} items, expected ${PAGES} / ${PAGES * PAGE_SIZE}`);

  // The heap cost of one page: 50 different pages parsed and kept (different, so no string of one is
  // shared with another, as on a real walk).
  const texts = [];
  for (let p = 2; p <= 51; p++) {
    const res = await fetch(`${t.origin}${PATH}${SEARCH}&page=${p}`, {
      headers: { authorization: `Bearer ${t.apiKey}` },
    });
    texts.push(await res.text());
  }
  const copies = [];
  gc();
  const before = process.memoryUsage().heapUsed;
  for (const text of texts) copies.push(JSON.parse(text).results);
  gc();
  const pageHeapBytes = (process.memoryUsage().heapUsed - before) / copies.length;
  return { walker: o.walker, concurrency: o.concurrency, ms, pages, items, series, pageHeapBytes };
}

childMain({ walk, events, storm, heap });
