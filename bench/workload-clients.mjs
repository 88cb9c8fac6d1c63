// The clients of the workload mode (`npm run bench -- --workloads`), each as an app would write it with
// that library. Every client sends `x-bench-client: <name>` as a default header, so the server counts
// requests per client. Used only inside workload-child.mjs.
import {
  BALANCE_PATH,
  BALANCE_QUERY,
  CLIENT_HEADER,
  OPENAI_BASE,
  PAGE_SIZE,
  WALK_ACCOUNT,
} from './shared.mjs';

/** The peers of the walk and storm workloads, besides billing-sdk. */
export const PEERS = ['openai', 'stripe'];

/**
 * billing-sdk from its built package. `options` are BillingClient options on top of the key, the base
 * URL and the client header.
 * @param {import('./shared.mjs').Target} t
 * @param {Record<string, unknown>} [options]
 */
export async function billingClient(t, options = {}) {
  const { BillingClient } = await import('billing-sdk');
  return new BillingClient({
    apiKey: t.apiKey,
    baseUrl: `${t.origin}/api/`,
    headers: { [CLIENT_HEADER]: 'billing-sdk' },
    ...options,
  });
}

/** openai-node 6.x with its defaults (maxRetries 2, which honours Retry-After). @param {import('./shared.mjs').Target} t */
async function openaiClient(t, baseURL) {
  const { default: OpenAI } = await import('openai');
  return new OpenAI({ apiKey: t.apiKey, baseURL, defaultHeaders: { [CLIENT_HEADER]: 'openai' } });
}

/**
 * stripe-node 23.x with its defaults (node:http client, maxNetworkRetries 2), pointed at the bench
 * server as stripe-client.mjs does. Telemetry off: it only adds a header about the previous request.
 * stripe-node has no default-headers option: the client header goes on each call.
 * @param {import('./shared.mjs').Target} t
 */
async function stripeClient(t) {
  const { default: Stripe } = await import('stripe');
  return new Stripe(t.apiKey, { host: '127.0.0.1', port: t.port, protocol: 'http', telemetry: false });
}
const stripeHeaders = { [CLIENT_HEADER]: 'stripe-node' };

/**
 * A walk of the whole `acct_walk` list (200 pages of 20) with each client's own auto-pagination.
 * `warm()` loads the first page once, untimed (connection, JIT); `walk(onItem)` is the timed walk and
 * resolves to the pages it saw (null when the client does not expose pages).
 * @typedef {object} Walker
 * @property {() => Promise<void>} warm
 * @property {(onItem: (item: Record<string, unknown>) => void) => Promise<number | null>} walk
 */

/** @type {Record<string, (t: import('./shared.mjs').Target, concurrency: number) => Promise<Walker>>} */
export const walkers = {
  'billing-sdk': async (t, concurrency) => {
    const billing = await billingClient(t);
    const params = { account_ref_id: WALK_ACCOUNT, page_size: PAGE_SIZE };
    return {
      warm: async () => {
        await billing.invoices.list(params);
      },
      walk: async (onItem) => {
        let pages = 0;
        for await (const page of billing.invoices.list(params).pages({ concurrency })) {
          pages++;
          if (page.page !== pages) throw new Error(`page ${page.page} came in position ${pages}`);
          for (const item of page.results) onItem(item);
        }
        return pages;
      },
    };
  },
  // openai-node's own paginator: `getAPIList(path, CursorPage, { query })` follows `has_more` and asks
  // for the next page with `after=<id of the last item>`.
  openai: async (t) => {
    const client = await openaiClient(t, t.origin + OPENAI_BASE);
    const { CursorPage } = await import('openai/pagination');
    const list = () => client.getAPIList('/invoices', CursorPage, { query: { limit: PAGE_SIZE } });
    return {
      warm: async () => {
        await list();
      },
      walk: async (onItem) => {
        for await (const item of list()) onItem(item);
        return null;
      },
    };
  },
  // stripe-node's own paginator: `stripe.invoices.list({ limit }).autoPagingEach(fn)` follows
  // `has_more` with `starting_after=<id of the last item>` on GET /v1/invoices.
  stripe: async (t) => {
    const stripe = await stripeClient(t);
    return {
      warm: async () => {
        await stripe.invoices.list({ limit: PAGE_SIZE });
      },
      walk: async (onItem) => {
        await stripe.invoices.list({ limit: PAGE_SIZE }).autoPagingEach((item) => {
          onItem(item);
        });
        return null;
      },
    };
  },
};

/**
 * One balance call per client, as a loop in an app would make it, with the client's own retries on
 * (their defaults). Resolves on a 2xx, rejects on an error the client gave up on.
 * @type {Record<string, (t: import('./shared.mjs').Target) => Promise<() => Promise<unknown>>>}
 */
export const stormCallers = {
  'billing-sdk': async (t) => {
    // Defaults: maxRetries 2, maxRetryDelay 60 s; a 429 with Retry-After pauses every call of the client.
    const billing = await billingClient(t);
    return () => billing.usage.balance(BALANCE_QUERY);
  },
  openai: async (t) => {
    // Defaults: maxRetries 2; a 429 is retried after Retry-After (here 1 s), each call on its own.
    const client = await openaiClient(t, `${t.origin}/api`);
    const path = BALANCE_PATH.slice('/api'.length);
    return () => client.get(path, { query: BALANCE_QUERY });
  },
  stripe: async (t) => {
    // Defaults: maxNetworkRetries 2, which stripe-node applies to connection errors, 409 and 5xx but
    // not to a 429 (unless the server says `Stripe-Should-Retry: true`); it never reads Retry-After.
    const stripe = await stripeClient(t);
    const path = `${BALANCE_PATH}?${new URLSearchParams(BALANCE_QUERY)}`;
    return () => stripe.rawRequest('GET', path, null, { additionalHeaders: stripeHeaders });
  },
};
