// One page of 20 invoices through billing-sdk and through the other ways to ask for it: raw fetch,
// undici's `request`, ky, openai-node, stripe-node (node:http and fetch), billing-sdk traced and on
// global fetch. The server runs in its own process (page-server.mjs), so this process's CPU is the
// client's. tinybench, at 1 and 32 requests in flight, 2 rounds; ratios to raw fetch per round.
import diagnostics from 'node:diagnostics_channel';
import { BillingClient } from 'billing-sdk';
import ky from 'ky';
import OpenAI from 'openai';
import Stripe from 'stripe';
import { request } from 'undici';
import { goal, median, r3, timeTasks } from './lib.mjs';
import { API_KEY, LIST_PATH, QUERY, startPageServer } from './page-server.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Client throughput and CPU';
export const how =
  "One page of 20 invoices (12 KB) from a server in its own process on loopback, through each client with retries off. tinybench runs each client for 1 s (after 0.3 s of warm-up) at 1 and at 32 requests in flight, 3 rounds, the clients' order rotating each round; req/s is calls ÷ the measured window, CPU is this process's user+system time ÷ calls. Ratios are to raw fetch in the same round (median of rounds).";

const HEADERS = { authorization: `Bearer ${API_KEY}`, accept: 'application/json' };
const ROUNDS = 3;

/** Each client: the server → a call resolving to the page's 20 invoices (or a timeTasks task). */
const CLIENTS = {
  fetch: ({ origin }) => {
    const url = origin + LIST_PATH;
    return async () => {
      const res = await fetch(url, { headers: HEADERS });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      return JSON.parse(text).results;
    };
  },
  undici: ({ origin }) => {
    const url = origin + LIST_PATH;
    return async () => {
      const res = await request(url, { headers: HEADERS });
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
      return (await res.body.json()).results;
    };
  },
  'billing-sdk': ({ origin }) => {
    const billing = new BillingClient({ apiKey: API_KEY, baseUrl: `${origin}/api/`, maxRetries: 0 });
    return async () => (await billing.invoices.list(QUERY)).results;
  },
  'billing-sdk traced': ({ origin }) => {
    // A subscriber reading what a tracer would, on while this client runs only (a subscriber is
    // process-wide): what tracing costs once something listens.
    const read = (trace) => trace.attempt;
    const subscriber = { start: read, end: read, asyncStart: read, asyncEnd: read, error: read };
    const channels = ['billing-sdk:request', 'billing-sdk:attempt'].map((n) => diagnostics.tracingChannel(n));
    const billing = new BillingClient({ apiKey: API_KEY, baseUrl: `${origin}/api/`, maxRetries: 0 });
    return {
      fn: async () => (await billing.invoices.list(QUERY)).results,
      on: () => {
        for (const c of channels) c.subscribe(subscriber);
      },
      off: () => {
        for (const c of channels) c.unsubscribe(subscriber);
      },
    };
  },
  'billing-sdk on fetch': ({ origin }) => {
    const billing = new BillingClient({ apiKey: API_KEY, baseUrl: `${origin}/api/`, maxRetries: 0, fetch });
    return async () => (await billing.invoices.list(QUERY)).results;
  },
  ky: ({ origin }) => {
    const url = origin + LIST_PATH;
    return async () => (await ky.get(url, { headers: HEADERS, retry: 0 }).json()).results;
  },
  openai: ({ origin }) => {
    const client = new OpenAI({ apiKey: API_KEY, baseURL: `${origin}/api`, maxRetries: 0 });
    return async () => (await client.get('/invoices/', { query: QUERY })).results;
  },
  'stripe (node:http)': (server) => stripeCall(server, Stripe.createNodeHttpClient()),
  'stripe (fetch)': (server) => stripeCall(server, Stripe.createFetchHttpClient()),
};

function stripeCall({ port }, httpClient) {
  const stripe = new Stripe(API_KEY, {
    httpClient,
    host: '127.0.0.1',
    port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  });
  return async () => (await stripe.rawRequest('GET', LIST_PATH)).results;
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const server = await startPageServer();
  const tasks = {};
  for (const [name, make] of Object.entries(CLIENTS)) {
    const task = make(server);
    const call = task.fn ?? task;
    const results = await call();
    if (results.length !== 20 || results[19].processor_invoice_id !== 'in_000019') throw new Error(name);
    tasks[name] = task;
  }
  const runs = { 1: [], 32: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of [1, 32])
      runs[c].push(await timeTasks(tasks, { time: 1000, warmupTime: 300, concurrency: c, rotate: round }));
  }
  server.stop();
  // Per client and concurrency: median req/s and CPU µs/request, and the per-round ratios to raw fetch.
  const vs = (c, name, base, stat) => r3(median(runs[c].map((r) => r[name][stat] / r[base][stat])));
  const ratio = (c, name, stat) => vs(c, name, 'fetch', stat);
  const table = Object.keys(CLIENTS).map((name) => {
    const row = { client: name };
    for (const c of [1, 32]) {
      row[`rps_c${c}`] = median(runs[c].map((r) => r[name].hz));
      row[`rps_ratio_c${c}`] = r3(ratio(c, name, 'hz'));
      row[`cpu_us_c${c}`] = median(runs[c].map((r) => r[name].cpu));
      row[`cpu_ratio_c${c}`] = r3(ratio(c, name, 'cpu'));
    }
    return row;
  });
  const row = Object.fromEntries(table.map((r) => [r.client, r]));
  const sdk = row['billing-sdk'];
  const peers = ['openai', 'stripe (fetch)'];
  const goals = [
    goal('billing-sdk req/s at c=1 ÷ raw fetch', `${sdk.rps_ratio_c1}×`, '≥ 1.00×', sdk.rps_ratio_c1 >= 1),
    goal(
      'billing-sdk req/s at c=32 ÷ raw fetch',
      `${sdk.rps_ratio_c32}×`,
      '≥ 1.20×',
      sdk.rps_ratio_c32 >= 1.2,
    ),
    ...[1, 32].map((c) =>
      goal(
        `billing-sdk ahead of the fetch-based peers at c=${c}`,
        `${sdk[`rps_c${c}`]} req/s vs ${peers.map((p) => `${p} ${row[p][`rps_c${c}`]}`).join(', ')}`,
        'more req/s than each',
        peers.every((p) => sdk[`rps_c${c}`] > row[p][`rps_c${c}`]),
      ),
    ),
    goal(
      'billing-sdk CPU per request ÷ raw fetch',
      `${sdk.cpu_ratio_c1}× at c=1, ${sdk.cpu_ratio_c32}× at c=32`,
      '≤ 1.00× at each',
      sdk.cpu_ratio_c1 <= 1 && sdk.cpu_ratio_c32 <= 1,
    ),
    goal(
      'billing-sdk CPU per request ÷ ky',
      `${vs(1, 'billing-sdk', 'ky', 'cpu')}× at c=1, ${vs(32, 'billing-sdk', 'ky', 'cpu')}× at c=32`,
      '≤ 1.10× at each',
      vs(1, 'billing-sdk', 'ky', 'cpu') <= 1.1 && vs(32, 'billing-sdk', 'ky', 'cpu') <= 1.1,
    ),
    goal(
      'tracing on: CPU per request ÷ billing-sdk without a subscriber',
      `${vs(1, 'billing-sdk traced', 'billing-sdk', 'cpu')}× at c=1, ${vs(32, 'billing-sdk traced', 'billing-sdk', 'cpu')}× at c=32`,
      '',
      null,
    ),
  ];
  return { goals, rounds: ROUNDS, table };
}
