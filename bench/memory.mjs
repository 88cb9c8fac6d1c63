// Memory while walking 1000 pages (20,000 invoices): billing-sdk one page at a time, billing-sdk with 8
// pages in flight, and raw fetch + JSON.parse keeping nothing (the control). Each walk in a fresh child
// with --expose-gc: at marked pages `gc()` then `heapUsed`. The concurrent walk also counts the pages
// loaded but not yet handed out (its fetch counts list responses) at each mark, after a pause that lets
// the read-ahead fill.
import { BillingClient } from 'billing-sdk';
import { childMain, goal, inChild, isMain, sleep } from './lib.mjs';
import { API_KEY, LIST_PATH, PAGES, QUERY, startPageServer } from './page-server.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Memory walking 1000 pages';
export const how =
  'Each walk in a fresh process with `--expose-gc`: 1000 pages of 20 invoices from the page server; at pages 1, 100, 250, 500, 750, 1000 two `gc()` then `heapUsed`. The control walks the same pages with raw fetch + JSON.parse, keeping nothing. With 8 in flight, the pages held count the one in hand plus pages received but not yet handed out (a counting `fetch`), 200 ms after each mark.';

const MARKS = [1, 100, 250, 500, 750, 1000];
const MiB = 1024 * 1024;

async function walk({ origin, kind }) {
  const heap = {};
  const mark = async (page) => {
    if (!MARKS.includes(page)) return;
    global.gc();
    global.gc();
    heap[page] = process.memoryUsage().heapUsed;
  };
  if (kind === 'fetch') {
    for (let page = 1, url = origin + LIST_PATH; url; page++) {
      const body = JSON.parse(
        await (await fetch(url, { headers: { authorization: `Bearer ${API_KEY}` } })).text(),
      );
      await mark(page);
      url = body.next;
    }
    return { heap };
  }
  let received = 0;
  const counting = async (input, init) => {
    const res = await fetch(input, init);
    received++;
    return res;
  };
  const billing = new BillingClient({ apiKey: API_KEY, baseUrl: `${origin}/api/`, fetch: counting });
  const list = billing.invoices.list(QUERY);
  let page = 0;
  let aheadMax = 0;
  let items = 0;
  const pages = kind === 'concurrent' ? list.pages({ concurrency: 8 }) : list.pages();
  for await (const p of pages) {
    page++;
    items += p.results.length;
    if (kind === 'concurrent' && MARKS.includes(page)) {
      await sleep(200);
      aheadMax = Math.max(aheadMax, received - page);
    }
    await mark(page);
  }
  if (items !== PAGES * 20) throw new Error(`walked ${items} invoices`);
  return { heap, aheadMax };
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const server = await startPageServer();
  const walks = {};
  for (const kind of ['sequential', 'fetch', 'concurrent']) {
    walks[kind] = await inChild(
      import.meta.url,
      { origin: server.origin, kind },
      { execArgv: ['--expose-gc'] },
    );
  }
  server.stop();
  const growth = (kind) => walks[kind].heap[1000] - walks[kind].heap[100];
  const kib = (bytes) => `${bytes >= 0 ? '+' : ''}${Math.round(bytes / 1024)} KiB`;
  const more = (kind) => growth(kind) - growth('fetch');
  const goals = ['sequential', 'concurrent'].map((kind) =>
    goal(
      `heap flat walking 1000 pages ${kind === 'sequential' ? 'one at a time' : 'with 8 in flight'}`,
      `grew ${kib(growth(kind))} from page 100 to 1000; raw fetch ${kib(growth('fetch'))}: ${kib(more(kind))} more`,
      '≤ +1 MiB more than raw fetch',
      more(kind) <= MiB,
    ),
  );
  const held = walks.concurrent.aheadMax + 1;
  goals.push(
    goal(
      'pages held walking with 8 in flight (in hand + loaded ahead, max over marks)',
      String(held),
      '≤ 9',
      held <= 9,
    ),
  );
  const table = MARKS.map((page) => ({
    page,
    ...Object.fromEntries(
      Object.entries(walks).map(([k, w]) => [`${k}_MiB`, +(w.heap[page] / MiB).toFixed(2)]),
    ),
  }));
  return { goals, table };
}

if (isMain(import.meta)) childMain(walk);
