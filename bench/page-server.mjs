// The invoice list, served fast from its own process: 1000 pages (or `pages`) of 20 invoices of account `acct_1`
// (the mock's wire form, each page's bytes built once), in the service's page-number form and in the
// cursor form openai's and stripe's paginators follow (`data`, `has_more`, `starting_after`/`after`).
// Anything else is a 404, so every client is proven to ask for the same thing. `delayMs` holds each
// answer that long (a network's round trip). The mock itself (billing-sdk/testing) serves the rest.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { isMain } from './lib.mjs';

export const API_KEY = 'bench_key_not_a_secret';
export const PAGE_SIZE = 20;
export const PAGES = 1000;
export const QUERY = { account_ref_id: 'acct_1', page_size: PAGE_SIZE };
export const LIST_PATH = `/api/invoices/?account_ref_id=acct_1&page_size=${PAGE_SIZE}`;

/** Starts the server in a child; resolves to its origin and a stop function. */
export function startPageServer({ delayMs = 0, pages = PAGES } = {}) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), String(delayMs), String(pages)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`page server exited ${code}`)));
    child.stdout.setEncoding('utf8').once('data', (line) => {
      const port = Number(line.trim());
      resolve({ port, origin: `http://127.0.0.1:${port}`, stop: () => child.kill() });
    });
  });
}

function invoice(n) {
  const day = new Date(Date.UTC(2020, 0, 1) + n * 60_000).toISOString().replace('.000Z', 'Z');
  const id = `in_${String(n).padStart(6, '0')}`;
  return {
    processor_invoice_id: id,
    account_ref_id: 'acct_1',
    status: 'paid',
    is_paid: true,
    amount_due: 2900,
    amount_paid: 2900,
    currency: 'usd',
    customer_email: 'bench@example.com',
    invoice_date: day,
    due_date: day,
    period_start: day,
    period_end: day,
    hosted_invoice_url: `https://billing.example.com/i/${id}`,
    processor_subscription_id: 'sub_1',
    product_manage_id: 'prod_pro_plan',
    created_at: day,
    updated_at: day,
  };
}

function serve(delayMs, pages, origin) {
  const cache = new Map();
  const once = (key, make) => cache.get(key) ?? cache.set(key, Buffer.from(JSON.stringify(make()))).get(key);
  const items = (from) => Array.from({ length: PAGE_SIZE }, (_, i) => invoice(from + i));
  const numbered = (page) =>
    once(`p${page}`, () => ({
      count: pages * PAGE_SIZE,
      next: page < pages ? `${origin()}${LIST_PATH}&page=${page + 1}` : null,
      previous: page > 1 ? `${origin()}${LIST_PATH}&page=${page - 1}` : null,
      results: items((page - 1) * PAGE_SIZE),
    }));
  const cursor = (after) =>
    once(`c${after}`, () => {
      const from = after === null ? 0 : Number(after.slice(3)) + 1;
      return {
        object: 'list',
        has_more: from + PAGE_SIZE < pages * PAGE_SIZE,
        data: items(from).map((inv) => ({ id: inv.processor_invoice_id, ...inv })),
      };
    });
  const bodyFor = (url) => {
    if (url.pathname === '/api/invoices/' && url.search.startsWith(`?${LIST_PATH.split('?')[1]}`)) {
      const page = Number(url.searchParams.get('page') ?? 1);
      return page >= 1 && page <= pages ? numbered(page) : undefined;
    }
    // openai's CursorPage at /api/cursor/invoices, stripe's autopaging at /v1/invoices.
    const cursorPath = url.pathname === '/api/cursor/invoices' || url.pathname === '/v1/invoices';
    if (cursorPath && url.searchParams.get('limit') === String(PAGE_SIZE)) {
      return cursor(url.searchParams.get('starting_after') ?? url.searchParams.get('after'));
    }
    return undefined;
  };
  const server = createServer((req, res) => {
    const body = req.headers.authorization === `Bearer ${API_KEY}` && bodyFor(new URL(req.url, 'http://x'));
    const answer = () => {
      if (!body) res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not found."}');
      else
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    };
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
  return server;
}

if (isMain(import.meta)) {
  const server = serve(
    Number(process.argv[2]),
    Number(process.argv[3]),
    () => `http://127.0.0.1:${server.address().port}`,
  );
  process.on('SIGTERM', () => process.exit(0));
}
