// What the server serves and every client asks for, in one place: all clients must request the same
// bytes (same path, same query in the same order, same key), or the comparison would not be fair.

/** API key the server accepts; a dummy, sent as `Authorization: Bearer …`. */
export const API_KEY = 'bench_key_not_a_secret_0123456789';

/** The endpoint measured. */
export const PATH = '/api/invoices/';

/** Query of the measured call, in the order billing-sdk puts it on the wire. */
export const QUERY = Object.freeze({ account_ref_id: 'acct_1', page_size: 20 });

/** `?account_ref_id=acct_1&page_size=20`: the exact query string every client sends. */
export const SEARCH = `?${new URLSearchParams(Object.entries(QUERY).map(([k, v]) => [k, String(v)]))}`;

/** Items per page and pages served (the memory test walks all of them). */
export const PAGE_SIZE = QUERY.page_size;
export const PAGES = 1000;

/**
 * What a client module is handed.
 * @typedef {object} Target
 * @property {string} origin  `http://127.0.0.1:<port>`, no trailing slash
 * @property {number} port
 * @property {string} apiKey
 * @property {string} path    {@link PATH}
 * @property {Readonly<{account_ref_id: string, page_size: number}>} query  {@link QUERY}
 * @property {string} search  {@link SEARCH}
 */

/**
 * The interface of every `clients/*.mjs` module: `label` for the report, `pkg` naming the package
 * whose version is reported (or null for Node built-ins), and `create(target)` returning a function
 * that performs one request and resolves to the page's `results` array.
 * @typedef {object} ClientModule
 * @property {string} label
 * @property {string | null} pkg
 * @property {(target: Target) => Promise<() => Promise<unknown[]>>} create
 */

/** @param {number} port @returns {Target} */
export function targetFor(port) {
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    apiKey: API_KEY,
    path: PATH,
    query: QUERY,
    search: SEARCH,
  };
}

/** Prefix of the one line a child prints for its parent, so stray library output cannot be mistaken for it. */
export const RESULT_PREFIX = 'BENCH_RESULT ';

/**
 * The main of a child with several kinds of measurement: runs `kinds[o.kind](o, target)` for the
 * options given as JSON in argv[2], prints its result on one `BENCH_RESULT` line and exits (at once:
 * keep-alive sockets and client timers would otherwise hold the process open); on failure, the error
 * on stderr and exit code 1.
 * @param {Record<string, (o: Record<string, any>, t: Target) => Promise<unknown>>} kinds
 */
export function childMain(kinds) {
  const o = JSON.parse(process.argv[2] ?? '{}');
  reportAndExit(Promise.resolve().then(() => kinds[o.kind](o, targetFor(o.port))));
}

/**
 * Ends a child with what `work` gives: its result on one `BENCH_RESULT` line and exit 0 (at once:
 * keep-alive sockets and client timers would otherwise hold the process open), or the error on
 * stderr and exit code 1.
 * @param {Promise<unknown>} work
 */
export function reportAndExit(work) {
  work.then(
    (result) => {
      // Exit once written: a line longer than the pipe holds is otherwise cut at exit.
      process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`, () => process.exit(0));
    },
    (err) => {
      process.stderr.write(`${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}

/** A control request to the bench server (no key, no latency): its JSON answer. @param {string} origin */
export async function benchControl(origin, pathAndQuery) {
  const res = await fetch(origin + pathAndQuery);
  const body = await res.json();
  if (!res.ok) throw new Error(`control ${pathAndQuery}: HTTP ${res.status}`);
  return body;
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- Workload mode (`npm run bench -- --workloads`): see server.mjs and workloads.mjs. ----

/** The header every workload client sends so the server can count requests per client. */
export const CLIENT_HEADER = 'x-bench-client';

/** The account whose invoice list is walked in the walk workload: WALK_PAGES pages of PAGE_SIZE. */
export const WALK_ACCOUNT = 'acct_walk';
export const WALK_PAGES = 200;

/** openai-node's base URL is `<origin>${OPENAI_BASE}`; its list is `${OPENAI_BASE}/invoices`. */
export const OPENAI_BASE = '/openai/v1';
/** stripe-node's own path for `stripe.invoices.list()`. */
export const STRIPE_INVOICES = '/v1/invoices';

/** Usage endpoints, as billing-sdk sends them under `/api/`. */
export const USAGE_EVENTS_PATH = '/api/usage/events/';
export const BALANCE_PATH = '/api/usage/credits/balance/';
/** The meter every usage call of the bench uses. */
export const METER = Object.freeze({ product_code: 'api-gateway', meter_code: 'api_calls' });
/** The query of every balance call: `?account_ref_id=acct_1&product_code=…&meter_code=…`. */
export const BALANCE_QUERY = Object.freeze({ account_ref_id: 'acct_1', ...METER });

// ---- Access mode (`npm run bench -- --access`): see server.mjs and access.mjs. ----

/** Accounts of the access mode are `acct_a<n>`; the server answers their status. */
export const ACCESS_PREFIX = 'acct_a';
/** One account in ACCESS_INACTIVE_EVERY starts inactive (n % 10 === 3): its answers are kept `denyTtlMs`. */
export const ACCESS_INACTIVE_EVERY = 10;
/** Whether account number `n` starts active. @param {number} n */
export const startsActive = (n) => n % ACCESS_INACTIVE_EVERY !== 3;

/**
 * The status of an access-mode account as the service sends it: the reference's single form, with
 * every documented field. A string, so that a store or server hands out a fresh parse of it.
 * @param {string} account @param {boolean} active
 */
export function statusBody(account, active) {
  return JSON.stringify({
    account_ref_id: account,
    is_active: active,
    customer_email: `${account}@example.com`,
    created_at: '2024-01-02T09:00:00Z',
    updated_at: '2024-06-02T09:00:00Z',
    subscription_tier: {
      label_name: 'pro',
      name: 'Pro',
      description: 'For growing teams',
      price: '29.00',
      billing_cycle: 'monthly',
      features: 'API access, Priority support, SSO',
      is_popular: true,
      product_manage_id: 'prod_pro_plan',
    },
  });
}
