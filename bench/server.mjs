// The API the clients are measured against, in its own process so its CPU is never billed to a client.
// Serves GET /api/invoices/?account_ref_id=acct_1&page_size=20[&page=N] as a DRF-style envelope
// {count, next, previous, results} of 20 full Invoices, for pages 1..1000 (count 20000). Every body is
// built once at start, so a request costs a Map lookup and one write: the server does the same, small
// amount of work for every client. Prints `{"port":N}` on stdout once listening; exits when its stdin
// closes (the parent died or is done) or after a hard time limit.
import { createServer } from 'node:http';
import { API_KEY, PAGE_SIZE, PAGES, PATH, QUERY } from './shared.mjs';

/** A safety net: the harness runs for minutes; a server left behind would stop by itself. */
const MAX_LIFETIME_MS = 30 * 60_000;
const DAY_MS = 86_400_000;
const STATUSES = ['paid', 'paid', 'paid', 'open', 'paid', 'void', 'paid', 'draft', 'paid', 'uncollectible'];
const PRODUCTS = [
  { id: 'prod_pro_plan', amount: 29, subscription: true },
  { id: 'prod_team_plan', amount: 49, subscription: true },
  { id: 'prod_ebook', amount: 19, subscription: false },
  { id: 'prod_consulting', amount: 250, subscription: false },
];
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A deterministic, Stripe-looking id: same run, same bytes. */
function processorId(prefix, n, length) {
  let x = (n + 1) * 2654435761;
  let out = prefix;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += ALPHABET[x % ALPHABET.length];
  }
  return out;
}

const iso = (ms) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** Invoice number `n` (0-based over the whole list), with all 17 documented fields. */
function invoice(n) {
  const product = PRODUCTS[n % PRODUCTS.length];
  const status = STATUSES[n % STATUSES.length];
  const amountDue = product.amount + (n % 3) * 0.5;
  const invoiceDate = Date.UTC(2024, 0, 2, 9, 0, 0) + n * 3_600_000;
  const id = processorId('in_1Q', n, 19);
  return {
    processor_invoice_id: id,
    account_ref_id: QUERY.account_ref_id,
    status,
    is_paid: status === 'paid',
    amount_due: amountDue,
    amount_paid: status === 'paid' ? amountDue : 0,
    currency: 'usd',
    customer_email: 'ada.lovelace@example.com',
    invoice_date: iso(invoiceDate),
    due_date: iso(invoiceDate + 14 * DAY_MS),
    period_start: product.subscription ? iso(invoiceDate) : null,
    period_end: product.subscription ? iso(invoiceDate + 30 * DAY_MS) : null,
    hosted_invoice_url: `https://invoice.stripe.com/i/acct_1PqRsTuVwXyZ0123/live_${processorId('', n, 48)}?s=ap`,
    processor_subscription_id: product.subscription ? processorId('sub_1Q', n % 7, 19) : '',
    product_manage_id: product.id,
    created_at: iso(invoiceDate),
    updated_at: iso(status === 'draft' || status === 'open' ? invoiceDate : invoiceDate + DAY_MS),
  };
}

/** The wire form of a page's URL, `page` last as billing-sdk sends it. */
const pageQuery = (page) => `?account_ref_id=${QUERY.account_ref_id}&page_size=${PAGE_SIZE}&page=${page}`;

/** Every accepted request URL → its precomputed body. Page 1 is also reachable without `page`. */
function buildBodies(origin) {
  const bodies = new Map();
  for (let page = 1; page <= PAGES; page++) {
    const results = [];
    for (let i = 0; i < PAGE_SIZE; i++) results.push(invoice((page - 1) * PAGE_SIZE + i));
    const envelope = {
      count: PAGES * PAGE_SIZE,
      next: page < PAGES ? `${origin}${PATH}${pageQuery(page + 1)}` : null,
      previous: page > 1 ? `${origin}${PATH}${pageQuery(page - 1)}` : null,
      results,
    };
    const body = Buffer.from(JSON.stringify(envelope));
    bodies.set(PATH + pageQuery(page), body);
    if (page === 1) bodies.set(`${PATH}?account_ref_id=${QUERY.account_ref_id}&page_size=${PAGE_SIZE}`, body);
  }
  return bodies;
}

const AUTH = `Bearer ${API_KEY}`;
const errorBody = (status, message) =>
  // `error` as an object: every client, stripe-node included, then treats the answer as a failure.
  Buffer.from(
    JSON.stringify({
      error: { type: status === 401 ? 'authentication_error' : 'invalid_request_error', message },
    }),
  );

/** @type {Map<string, Buffer>} */
let bodies = new Map();

const server = createServer((req, res) => {
  let status = 200;
  let body = req.method === 'GET' ? bodies.get(req.url) : undefined;
  if (req.headers.authorization !== AUTH) {
    status = 401;
    body = errorBody(401, 'missing or wrong Authorization: Bearer key');
  } else if (body === undefined) {
    // Anything but the exact bytes every client is meant to send is refused, so a client that sends a
    // different query (and so gets a different answer) fails loudly instead of being measured.
    status = 400;
    body = errorBody(400, `unexpected request ${req.method} ${req.url}`);
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
// Keep-alive: connections live across a whole child's run; the defaults (5 s) would be enough, a
// longer idle timeout just removes any doubt.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  bodies = buildBodies(`http://127.0.0.1:${port}`);
  process.stdout.write(`${JSON.stringify({ port, pageBytes: bodies.get(PATH + pageQuery(1)).length })}\n`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
setTimeout(stop, MAX_LIFETIME_MS).unref();
