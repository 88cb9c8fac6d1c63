// Memory while billing-sdk walks 1000 pages with `for await`. The SDK promises to hold at most two
// pages however long the walk: heap after a full GC should stay flat from page 100 to page 1000.
//
// Run as a child with --expose-gc (`node --expose-gc memory.mjs <port> <walker>`); at the first item of
// each marked page it forces a full GC and reads process.memoryUsage().heapUsed, so what is read is what
// the walk keeps alive, not garbage that happens not to be collected yet.
//
// A heap after GC is not perfectly flat even for code that keeps nothing: V8 keeps compiling (code
// space counts in heapUsed) and undici/AbortSignal bookkeeping is swept lazily. Measured here, raw
// fetch walking the same 1000 pages grows about 0.5 MB. So the same walk is also run with raw fetch +
// JSON.parse (the `fetch` walker, in its own child) as a control, and "flat" means: the SDK grows less
// than FLAT_LIMIT_BYTES more than that control. A real leak is far bigger: keeping every page would
// add some 20 MB, keeping one invoice per page about 1.3 MB.
import { fileURLToPath } from 'node:url';
import { PAGE_SIZE, PAGES, RESULT_PREFIX, targetFor } from './shared.mjs';
import { resultOf, runNode } from './spawn.mjs';

/** Pages at which the heap is read. */
export const MARKS = [1, 100, 250, 500, 750, 1000];
/** Growth from page 100 to 1000, beyond the raw-fetch control's, still called flat: 1 MiB (~1.1 KiB per page). */
export const FLAT_LIMIT_BYTES = 1024 * 1024;
/** The whole walk is bounded: 1000 pages on loopback take a few seconds. */
const WALK_LIMIT_MS = 120_000;

/**
 * @typedef {object} MemoryResult
 * @property {{page: number, heapUsed: number}[]} series
 * @property {number} items       invoices seen (20000 expected)
 * @property {number} elapsedMs   the whole walk
 * @property {number} growthBytes heapUsed at page 1000 minus at page 100
 */

/**
 * Parent side: runs one walk in a fresh child.
 * @param {{port: number, cwd: string, walker: 'billing-sdk' | 'fetch'}} options
 * @returns {Promise<MemoryResult>}
 */
export async function measureMemory({ port, cwd, walker }) {
  const here = fileURLToPath(import.meta.url);
  const run = await runNode(['--expose-gc', here, String(port), walker], {
    cwd,
    timeoutMs: WALK_LIMIT_MS + 10_000,
  });
  return resultOf(run, `memory walk (${walker})`);
}

/**
 * Every invoice of every page: billing-sdk's `for await`, or the control's page loop with raw fetch
 * (same URLs as the SDK sends: `page` added from page 2 on).
 * @param {import('./shared.mjs').Target} t
 * @param {string} walker
 * @returns {Promise<{items: AsyncIterable<{processor_invoice_id: unknown}>}>}  wrapped: a PagePromise returned
 *   bare from an async function would be awaited (it is thenable) and become its first page.
 */
async function invoicesOf(t, walker) {
  if (walker === 'fetch') {
    const init = { headers: { authorization: `Bearer ${t.apiKey}`, accept: 'application/json' } };
    const items = async function* () {
      for (let page = 1; page <= PAGES; page++) {
        const url = t.origin + t.path + t.search + (page === 1 ? '' : `&page=${page}`);
        const res = await fetch(url, init);
        const text = await res.text();
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text}`);
        yield* JSON.parse(text).results;
      }
    };
    return { items: items() };
  }
  const { BillingClient } = await import('billing-sdk');
  const billing = new BillingClient({ apiKey: t.apiKey, baseUrl: `${t.origin}/api/`, maxRetries: 0 });
  return { items: billing.invoices.list({ account_ref_id: t.query.account_ref_id, page_size: PAGE_SIZE }) };
}

/** Child side. @param {number} port @param {string} walker */
async function walk(port, walker) {
  const gc = globalThis.gc;
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  const { items: invoices } = await invoicesOf(targetFor(port), walker);
  const marks = new Set(MARKS);
  const series = [];
  const started = performance.now();
  let items = 0;
  for await (const inv of invoices) {
    if (items % PAGE_SIZE === 0) {
      const page = items / PAGE_SIZE + 1;
      if (marks.has(page)) {
        gc();
        series.push({ page, heapUsed: process.memoryUsage().heapUsed });
      }
      if (performance.now() - started > WALK_LIMIT_MS) throw new Error(`walk exceeded ${WALK_LIMIT_MS} ms`);
    }
    if (typeof inv.processor_invoice_id !== 'string') throw new Error('not an invoice');
    items++;
  }
  const elapsedMs = performance.now() - started;
  if (items !== PAGES * PAGE_SIZE) throw new Error(`walked ${items} invoices, expected ${PAGES * PAGE_SIZE}`);
  const at = (page) => series.find((s) => s.page === page)?.heapUsed ?? Number.NaN;
  /** @type {MemoryResult} */
  const result = { series, items, elapsedMs, growthBytes: at(1000) - at(100) };
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  walk(Number(process.argv[2]), process.argv[3] ?? 'billing-sdk').then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}
