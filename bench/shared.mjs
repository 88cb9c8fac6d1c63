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
