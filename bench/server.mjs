// The API the clients are measured against, in its own process so its CPU is never billed to a client.
// Serves GET /api/invoices/?account_ref_id=acct_1&page_size=20[&page=N] as a DRF-style envelope
// {count, next, previous, results} of 20 full Invoices, for pages 1..1000 (count 20000). Every body is
// built once at start, so a request costs a Map lookup and one write: the server does the same, small
// amount of work for every client. Prints `{"port":N}` on stdout once listening; exits when its stdin
// closes (the parent died or is done) or after a hard time limit.
//
// `node server.mjs '{"workloads":true,"latencyMs":20}'` (what `npm run bench -- --workloads` starts) adds,
// with every API answer delayed by `latencyMs` (the control routes under /__bench/ are never delayed):
// - the invoice list of account `acct_walk`: 200 pages of 20 (count 4000), in three wire forms of the
//   SAME invoices, for each client's own paginator:
//     billing-sdk  GET /api/invoices/?account_ref_id=acct_walk&page_size=20[&page=N]   DRF page numbers
//     openai-node  GET /openai/v1/invoices?limit=20[&after=<last id>]  {object, data, first_id, last_id, has_more}
//     stripe-node  GET /v1/invoices?limit=20[&starting_after=<last id>] {object: 'list', url, has_more, data}
//   (the two cursor forms add `id`, the invoice's processor_invoice_id, to each item: both paginators
//   take their cursor from the last item's `id`);
// - POST /api/usage/events/: usage events stored per account, idempotently by event_key, with an
//   optional seeded fault mode per account (some requests answered 503 before anything is stored, some
//   stored and then the connection destroyed before the answer is written);
// - GET /api/usage/credits/balance/: the balance, or, while a storm is on, 429 + `Retry-After: 1` to
//   every request, counted per client (header `x-bench-client`) with arrival times;
// - control routes (no key, no latency): GET /__bench/usage-config?account=&fail=&drop=&seed=,
//   GET /__bench/usage-stats?account=, GET /__bench/storm?ms=&retryAfter=, GET /__bench/storm-stats;
// - GET /api/account/<id>/status/ (`npm run bench -- --access`): the single-form status of accounts
//   `acct_a<n>` (active unless n % 10 === 3, until flipped), the reference's not-found answer for any
//   other account; requests counted. Control: GET /__bench/access-set?account=&active=0|1 (flips one
//   account's state), GET /__bench/access-stats ({requests}: status requests since the start);
// - GET /__bench/latency?ms=N: the latency of every API answer from then on (the modes that need
//   loopback and a round trip in one run: --access, --tracker).
import { createServer } from 'node:http';
import {
  ACCESS_PREFIX,
  API_KEY,
  BALANCE_PATH,
  CLIENT_HEADER,
  OPENAI_BASE,
  PAGE_SIZE,
  PAGES,
  PATH,
  QUERY,
  STRIPE_INVOICES,
  startsActive,
  statusBody,
  USAGE_EVENTS_PATH,
  WALK_ACCOUNT,
  WALK_PAGES,
} from './shared.mjs';

/** Options: `node server.mjs '{"workloads":true,"latencyMs":20}'`; none = the normal bench's server. */
const OPTIONS = { workloads: false, latencyMs: 0, ...JSON.parse(process.argv[2] ?? '{}') };
let LATENCY_MS = Number(OPTIONS.latencyMs) || 0;

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

/** `n` in base 62 on `width` characters. */
function base62(n, width) {
  let out = '';
  for (let i = 0; i < width; i++, n = Math.floor(n / ALPHABET.length))
    out = ALPHABET[n % ALPHABET.length] + out;
  return out;
}

/**
 * Invoice number `n` (0-based over the whole list), with all 17 documented fields. The normal list's
 * ids repeat now and then (processorId's arithmetic overflows a double's precision); that list keeps
 * them, so its bytes stay those of every earlier run. Other accounts get ids of the same length that
 * end in `n`, so they are unique: the cursor paginators of the walk workload need that.
 */
function invoice(n, account = QUERY.account_ref_id) {
  const product = PRODUCTS[n % PRODUCTS.length];
  const status = STATUSES[n % STATUSES.length];
  const amountDue = product.amount + (n % 3) * 0.5;
  const invoiceDate = Date.UTC(2024, 0, 2, 9, 0, 0) + n * 3_600_000;
  const id =
    account === QUERY.account_ref_id
      ? processorId('in_1Q', n, 19)
      : processorId('in_1Q', n, 14) + base62(n, 5);
  return {
    processor_invoice_id: id,
    account_ref_id: account,
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
const pageQuery = (page, account = QUERY.account_ref_id) =>
  `?account_ref_id=${account}&page_size=${PAGE_SIZE}&page=${page}`;

/**
 * Every accepted request URL → its precomputed body, for the DRF-style list of `account` with `pages`
 * pages. Page 1 is also reachable without `page`.
 * @param {Map<string, Buffer>} bodies
 */
function addDrfList(bodies, origin, account, pages) {
  for (let page = 1; page <= pages; page++) {
    const results = [];
    for (let i = 0; i < PAGE_SIZE; i++) results.push(invoice((page - 1) * PAGE_SIZE + i, account));
    const envelope = {
      count: pages * PAGE_SIZE,
      next: page < pages ? `${origin}${PATH}${pageQuery(page + 1, account)}` : null,
      previous: page > 1 ? `${origin}${PATH}${pageQuery(page - 1, account)}` : null,
      results,
    };
    const body = Buffer.from(JSON.stringify(envelope));
    bodies.set(PATH + pageQuery(page, account), body);
    if (page === 1) bodies.set(`${PATH}?account_ref_id=${account}&page_size=${PAGE_SIZE}`, body);
  }
  return bodies;
}

/**
 * The walk account's invoices as cursor lists: page bodies for openai-node's CursorPage and
 * stripe-node's list, and the page that follows each item id.
 */
function buildCursorLists() {
  /** @type {Map<string, number>} id → 0-based index */
  const indexOf = new Map();
  const openai = [];
  const stripe = [];
  for (let page = 0; page < WALK_PAGES; page++) {
    const data = [];
    for (let i = 0; i < PAGE_SIZE; i++) {
      const n = page * PAGE_SIZE + i;
      const inv = invoice(n, WALK_ACCOUNT);
      indexOf.set(inv.processor_invoice_id, n);
      data.push({ id: inv.processor_invoice_id, ...inv });
    }
    const has_more = page < WALK_PAGES - 1;
    openai.push(
      Buffer.from(
        JSON.stringify({
          object: 'list',
          data,
          first_id: data[0].id,
          last_id: data[data.length - 1].id,
          has_more,
        }),
      ),
    );
    stripe.push(Buffer.from(JSON.stringify({ object: 'list', url: STRIPE_INVOICES, has_more, data })));
  }
  return { indexOf, openai, stripe };
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
/** @type {ReturnType<typeof buildCursorLists> | undefined} */
let cursorLists;

/** The normal bench's answer: the exact bytes of a known GET, else 400 (or 401 without the key). */
function fixedAnswer(req) {
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
  return { status, body, headers: undefined };
}

// ---------------------------------------------------------------------------------------------------
// Workload routes.

/** mulberry32: a small seeded PRNG, so a fault run injects the same faults in the same order. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Per account: every event_key stored with its quantity, replays counted, and an optional fault mode.
 * @typedef {object} UsageLedger
 * @property {Map<string, number>} keys          event_key → quantity (first one wins, as an idempotent API does)
 * @property {Map<number, number>} keysPerQuantity  quantity → how many distinct keys recorded it
 * @property {number} requests  POSTs received for the account
 * @property {number} replays   POSTs whose event_key was already stored (answered idempotent: true)
 * @property {number} quantitySum
 * @property {number} failed    answered 503 before storing (fault mode)
 * @property {number} dropped   stored, then the connection destroyed unanswered (fault mode)
 * @property {{fail: number, drop: number, random: () => number} | null} faults
 */
/** @type {Map<string, UsageLedger>} */
const ledgers = new Map();
function ledger(account) {
  let l = ledgers.get(account);
  if (!l) {
    l = {
      keys: new Map(),
      keysPerQuantity: new Map(),
      requests: 0,
      replays: 0,
      quantitySum: 0,
      failed: 0,
      dropped: 0,
      faults: null,
    };
    ledgers.set(account, l);
  }
  return l;
}

/** The storm: 429 to every balance request until `endsAt`; requests counted per client. */
const storm = {
  startedAt: 0,
  endsAt: 0,
  retryAfter: 1,
  /** @type {Map<string, number[]>} client → arrival times (ms since the storm started) */
  arrivals: new Map(),
};

const json = (status, value, headers) => ({ status, body: Buffer.from(JSON.stringify(value)), headers });
const now = () => performance.now();

/** Reads a request body (the usage POSTs are small). @returns {Promise<string>} */
function readBody(req) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Validates and stores one usage event. Returns the answer, or 'drop' (stored, connection to be destroyed). */
async function usageEvent(req) {
  let event;
  try {
    event = JSON.parse(await readBody(req));
  } catch {
    return json(400, { non_field_errors: ['Invalid JSON'] });
  }
  const problems = {};
  for (const f of ['account_ref_id', 'product_code', 'meter_code', 'event_key']) {
    if (typeof event?.[f] !== 'string' || event[f] === '') problems[f] = ['This field is required.'];
  }
  if (!Number.isInteger(event?.quantity) || event.quantity < 1)
    problems.quantity = ['Ensure this value is a positive integer.'];
  if (Object.keys(problems).length > 0) return json(400, problems);

  const l = ledger(event.account_ref_id);
  l.requests++;
  const roll = l.faults ? l.faults.random() : 1;
  if (l.faults && roll < l.faults.fail) {
    l.failed++;
    return json(503, { detail: 'Service temporarily unavailable (bench fault mode).' });
  }
  let idempotent = true;
  if (l.keys.has(event.event_key)) {
    l.replays++;
  } else {
    idempotent = false;
    l.keys.set(event.event_key, event.quantity);
    l.keysPerQuantity.set(event.quantity, (l.keysPerQuantity.get(event.quantity) ?? 0) + 1);
    l.quantitySum += event.quantity;
  }
  if (l.faults && roll < l.faults.fail + l.faults.drop) {
    l.dropped++;
    return 'drop';
  }
  const recorded = l.keys.get(event.event_key);
  return json(200, { accepted: true, recorded_quantity: recorded, idempotent });
}

/** GET /api/usage/credits/balance/: a balance, or a 429 while the storm is on. */
function balance(req, url) {
  const t = now();
  if (t < storm.endsAt) {
    const client = String(req.headers[CLIENT_HEADER] ?? 'unknown');
    const list = storm.arrivals.get(client) ?? [];
    if (list.length === 0) storm.arrivals.set(client, list);
    list.push(t - storm.startedAt);
    return json(
      429,
      {
        detail: `Request was throttled. Expected available in ${storm.retryAfter} seconds.`,
        error: { type: 'rate_limit_error', message: 'Too many requests (bench storm).' },
      },
      { 'retry-after': String(storm.retryAfter) },
    );
  }
  const q = url.searchParams;
  return json(200, {
    account_ref_id: q.get('account_ref_id'),
    product_code: q.get('product_code'),
    meter_code: q.get('meter_code'),
    balance: 1000,
  });
}

/** Access mode: account → is_active, for the accounts flipped since the start; status requests served. */
const access = { flipped: new Map(), requests: 0 };
/** Bodies of the status answers, built once per account and state. @type {Map<string, Buffer>} */
const statusBodies = new Map();
const STATUS_PATH = /^\/api\/account\/([^/]+)\/status\/$/;
const NOT_FOUND = Buffer.from(JSON.stringify({ error: 'Account not found or invalid subscription tier' }));

/** GET /api/account/<id>/status/: an access-mode account's status, or the documented not-found. */
function accountStatus(account) {
  access.requests++;
  const n = account.startsWith(ACCESS_PREFIX) ? Number(account.slice(ACCESS_PREFIX.length)) : Number.NaN;
  if (!Number.isInteger(n) || n < 0) return { status: 404, body: NOT_FOUND, headers: undefined };
  const active = access.flipped.get(account) ?? startsActive(n);
  const key = `${active} ${account}`;
  let body = statusBodies.get(key);
  if (!body) {
    body = Buffer.from(statusBody(account, active));
    statusBodies.set(key, body);
  }
  return { status: 200, body, headers: undefined };
}

/** openai-node's CursorPage and stripe-node's list: `limit=20` and an optional cursor, nothing else. */
function cursorPage(url, cursorParam, pages) {
  const params = [...url.searchParams.keys()];
  const limit = url.searchParams.get('limit');
  const cursor = url.searchParams.get(cursorParam);
  if (limit !== String(PAGE_SIZE) || params.some((p) => p !== 'limit' && p !== cursorParam)) {
    return { status: 400, body: errorBody(400, `unexpected query ${url.search}`), headers: undefined };
  }
  let page = 0;
  if (cursor !== null) {
    const n = cursorLists.indexOf.get(cursor);
    if (n === undefined || (n + 1) % PAGE_SIZE !== 0 || (n + 1) / PAGE_SIZE >= WALK_PAGES)
      return { status: 400, body: errorBody(400, `unknown cursor ${cursor}`), headers: undefined };
    page = (n + 1) / PAGE_SIZE;
  }
  return { status: 200, body: pages[page], headers: undefined };
}

/** Control routes: no key, no latency. */
function control(url) {
  const q = url.searchParams;
  switch (url.pathname) {
    case '/__bench/usage-config': {
      const l = ledger(q.get('account') ?? '');
      const fail = Number(q.get('fail') ?? 0);
      const drop = Number(q.get('drop') ?? 0);
      l.faults = fail > 0 || drop > 0 ? { fail, drop, random: prng(Number(q.get('seed') ?? 1)) } : null;
      return json(200, { ok: true });
    }
    case '/__bench/usage-stats': {
      const l = ledger(q.get('account') ?? '');
      let doubled = 0;
      for (const k of l.keysPerQuantity.values()) if (k > 1) doubled++;
      return json(200, {
        requests: l.requests,
        distinctKeys: l.keys.size,
        distinctQuantities: l.keysPerQuantity.size,
        doubledQuantities: doubled,
        quantitySum: l.quantitySum,
        replays: l.replays,
        failed: l.failed,
        dropped: l.dropped,
      });
    }
    case '/__bench/storm': {
      storm.startedAt = now();
      storm.endsAt = storm.startedAt + Number(q.get('ms') ?? 10_000);
      storm.retryAfter = Number(q.get('retryAfter') ?? 1);
      storm.arrivals = new Map();
      return json(200, { ok: true, latencyMs: LATENCY_MS });
    }
    case '/__bench/access-set':
      access.flipped.set(q.get('account') ?? '', q.get('active') === '1');
      return json(200, { ok: true });
    case '/__bench/access-stats':
      return json(200, { requests: access.requests });
    case '/__bench/latency':
      LATENCY_MS = Number(q.get('ms') ?? 0);
      return json(200, { ok: true, latencyMs: LATENCY_MS });
    case '/__bench/storm-stats':
      return json(200, {
        durationMs: storm.endsAt - storm.startedAt,
        retryAfterMs: storm.retryAfter * 1000,
        latencyMs: LATENCY_MS,
        arrivals: Object.fromEntries(storm.arrivals),
      });
    default:
      return json(404, { detail: 'Not found.' });
  }
}

/** Every workload route, or undefined for the normal routes. */
async function workloadAnswer(req) {
  const url = new URL(req.url, 'http://bench');
  if (url.pathname.startsWith('/__bench/')) return { ...control(url), immediate: true };
  if (req.headers.authorization !== AUTH) return undefined; // the normal path answers the 401
  if (req.method === 'POST' && url.pathname === USAGE_EVENTS_PATH) return usageEvent(req);
  if (req.method !== 'GET') return undefined;
  if (url.pathname === BALANCE_PATH) return balance(req, url);
  const status = STATUS_PATH.exec(url.pathname);
  if (status) return accountStatus(decodeURIComponent(status[1]));
  if (url.pathname === `${OPENAI_BASE}/invoices`) return cursorPage(url, 'after', cursorLists.openai);
  if (url.pathname === STRIPE_INVOICES) return cursorPage(url, 'starting_after', cursorLists.stripe);
  return undefined;
}

/** Writes an answer. */
function send(res, { status, body, headers }) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length, ...headers });
  res.end(body);
}

const server = createServer(
  OPTIONS.workloads
    ? (req, res) => {
        workloadAnswer(req).then(
          (answer) => {
            if (answer === 'drop') {
              // Stored; the answer is lost on the way: the client sees the connection reset.
              setTimeout(() => req.socket.destroy(), LATENCY_MS);
              return;
            }
            const a = answer ?? fixedAnswer(req);
            if (a.immediate || LATENCY_MS <= 0) send(res, a);
            else setTimeout(() => send(res, a), LATENCY_MS);
          },
          (err) => {
            res.destroy(err);
          },
        );
      }
    : (req, res) => send(res, fixedAnswer(req)),
);
// Keep-alive: connections live across a whole child's run; the defaults (5 s) would be enough, a
// longer idle timeout just removes any doubt.
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  const origin = `http://127.0.0.1:${port}`;
  bodies = addDrfList(new Map(), origin, QUERY.account_ref_id, PAGES);
  if (OPTIONS.workloads) {
    addDrfList(bodies, origin, WALK_ACCOUNT, WALK_PAGES);
    cursorLists = buildCursorLists();
  }
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
