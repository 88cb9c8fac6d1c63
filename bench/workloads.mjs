// What an app does, with a network's 20 ms per answer: a walk of 200 pages (billing-sdk one page at a
// time and 8 in flight, openai's and stripe's auto-pagination); usage events through `recordMany` vs a
// `usage.record` loop, and under faults (nothing lost, nothing doubled); a 429 storm (how often each
// client comes back per Retry-After window). The pages from page-server.mjs, the rest from the mock.
import { BillingClient } from 'billing-sdk';
import { DEMO, seededRandom, startMockServer } from 'billing-sdk/testing';
import OpenAI from 'openai';
import { CursorPage } from 'openai/pagination';
import Stripe from 'stripe';
import { childMain, goal, inChild, isMain, median, r3, sleep } from './lib.mjs';
import { API_KEY, QUERY, startPageServer } from './page-server.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Workloads with 20 ms per answer';
export const how =
  "The page server answers every page after 20 ms; the walk is 200 pages (4,000 invoices, every id checked), 2 rounds per client. Usage events go from a client in a child process to the SDK's mock (20 ms per POST), each run on a fresh account; lost and doubled come from the mock's store (quantities 1…n). Under faults the client has `maxRetries: 4, retryDelay: () => 50`. The 429 storm answers every balance request 429 `Retry-After: 1` for 6 s while 16 loops call `balance`; requests counted per 1 s window after the first.";

const LATENCY_MS = 20;
const WALK_PAGES = 200;
const EVENTS = 400;
const STORM_S = 6;
const LOOPS = 16;
const METER = { product_code: DEMO.products.apiGateway.product_code, meter_code: DEMO.meters.apiCalls };

async function walks() {
  const server = await startPageServer({ delayMs: LATENCY_MS, pages: WALK_PAGES });
  const billing = new BillingClient({ apiKey: API_KEY, baseUrl: `${server.origin}/api/` });
  const openai = new OpenAI({ apiKey: API_KEY, baseURL: `${server.origin}/api` });
  const stripe = new Stripe(API_KEY, {
    host: '127.0.0.1',
    port: server.port,
    protocol: 'http',
    telemetry: false,
  });
  const walkers = {
    'billing-sdk c=1': () => billing.invoices.list(QUERY).pages({ concurrency: 1 }),
    'billing-sdk c=8': () => billing.invoices.list(QUERY).pages({ concurrency: 8 }),
    openai: () => openai.getAPIList('/cursor/invoices', CursorPage, { query: { limit: 20 } }),
    stripe: () => stripe.invoices.list({ limit: 20 }),
  };
  const ms = Object.fromEntries(Object.keys(walkers).map((k) => [k, []]));
  for (let round = 0; round < 2; round++) {
    for (const [name, walk] of Object.entries(walkers)) {
      const t0 = performance.now();
      const ids = new Set();
      for await (const x of walk()) {
        for (const item of x.results ?? [x]) ids.add(item.processor_invoice_id);
      }
      if (ids.size !== WALK_PAGES * 20) throw new Error(`${name} walked ${ids.size} invoices`);
      ms[name].push(Math.round(performance.now() - t0));
    }
  }
  server.stop();
  const fastestPeer = Math.min(median(ms.openai), median(ms.stripe));
  const ratio = r3(fastestPeer / median(ms['billing-sdk c=8']));
  return {
    table: Object.entries(ms).map(([client, xs]) => ({ client, median_ms: median(xs), runs_ms: xs })),
    goal: goal(
      `walk of ${WALK_PAGES} pages: billing-sdk with 8 in flight vs the fastest peer's auto-pagination`,
      `${median(ms['billing-sdk c=8'])} ms vs ${fastestPeer} ms: ${ratio}× faster`,
      '≥ 6×',
      ratio >= 6,
    ),
  };
}

/** In a child (the client's CPU apart from the mock's): EVENTS events, quantity i + 1, no key of the caller. */
async function send({ baseUrl, apiKey, account, how, retrying }) {
  const options = retrying ? { maxRetries: 4, retryDelay: () => 50 } : {};
  const billing = new BillingClient({ apiKey, baseUrl, logLevel: 'off', ...options });
  const events = Array.from({ length: EVENTS }, (_, i) => ({
    account_ref_id: account,
    ...METER,
    quantity: i + 1,
  }));
  await billing.usage.record({ ...events[0], account_ref_id: 'acct_active' }); // connection and JIT, untimed
  const t0 = performance.now();
  if (how === 'loop') for (const e of events) await billing.usage.record(e);
  else await billing.usage.recordMany(events, { concurrency: 16 });
  return Math.round(performance.now() - t0);
}

/** One run on a fresh account; the mock's store says what was recorded. */
async function usage(mock, how, retrying = false) {
  const account = `acct_usage_${how}_${retrying}`;
  await mock.lifecycle.subscribe({ account_ref_id: account });
  const args = { baseUrl: mock.baseUrl, apiKey: mock.apiKey, account, how, retrying };
  const ms = await inChild(import.meta.url, args);
  const stored = mock.store.usageEvents.filter((e) => e.account_ref_id === account);
  const quantities = new Set(stored.map((e) => e.quantity));
  return {
    ms,
    stored: stored.length,
    lost: EVENTS - quantities.size,
    doubled: stored.length - quantities.size,
  };
}

async function events() {
  const mock = await startMockServer({ host: '127.0.0.1', random: seededRandom(34) });
  const path = '/api/usage/events/';
  mock.faults.add({ method: 'POST', path, delayMs: LATENCY_MS, times: Number.POSITIVE_INFINITY });
  const runs = {
    recordMany: await usage(mock, 'many'),
    loop: await usage(mock, 'loop'),
  };
  // Faults first in the list: 5 % answered 503 before storing, 5 % stored then the connection dropped.
  mock.faults.clear();
  mock.faults.add({ method: 'POST', path, status: 503, probability: 0.05, times: Number.POSITIVE_INFINITY });
  mock.faults.add({
    method: 'POST',
    path,
    reset: 'after',
    probability: 0.05,
    times: Number.POSITIVE_INFINITY,
  });
  mock.faults.add({ method: 'POST', path, delayMs: LATENCY_MS, times: Number.POSITIVE_INFINITY });
  runs.faults = await usage(mock, 'many', true);
  await mock.close();
  const ratio = r3(runs.loop.ms / runs.recordMany.ms);
  const f = runs.faults;
  return {
    table: runs,
    goals: [
      goal(
        `${EVENTS} usage events: recordMany at concurrency 16 vs a usage.record loop`,
        `${runs.recordMany.ms} ms vs ${runs.loop.ms} ms: ${ratio}× faster`,
        '≥ 12×',
        ratio >= 12,
      ),
      goal(
        'recordMany under faults (5 % 503, 5 % stored then the connection dropped)',
        `${f.stored} of ${EVENTS} recorded, ${f.lost} lost, ${f.doubled} doubled`,
        `${EVENTS}, 0, 0`,
        f.stored === EVENTS && f.lost === 0 && f.doubled === 0,
      ),
    ],
  };
}

/**
 * 16 loops of balance calls per client while every balance request is answered 429 `Retry-After: 1`;
 * the requests arriving in each whole 1 s window after the first (which holds what was in flight).
 */
async function storm() {
  const mock = await startMockServer({ host: '127.0.0.1' });
  const params = {
    account_ref_id: DEMO.accounts.active,
    product_code: DEMO.products.aiAssistant.product_code,
    meter_code: DEMO.meters.credits,
  };
  const { baseUrl, apiKey } = mock;
  const path = '/api/usage/credits/balance/';
  const callers = {
    'billing-sdk': () => {
      const billing = new BillingClient({ apiKey, baseUrl, logLevel: 'off' });
      return () => billing.usage.balance(params);
    },
    openai: () => {
      const client = new OpenAI({ apiKey, baseURL: baseUrl.replace(/\/$/, '') });
      return () => client.get('/usage/credits/balance/', { query: params });
    },
    stripe: () => {
      const { port } = new URL(baseUrl);
      const stripe = new Stripe(apiKey, { host: '127.0.0.1', port, protocol: 'http', telemetry: false });
      return () => stripe.rawRequest('GET', `${path}?${new URLSearchParams(params)}`);
    },
  };
  const table = {};
  for (const [name, make] of Object.entries(callers)) {
    const call = make();
    await call();
    let stop = false;
    const loops = Array.from({ length: LOOPS }, async () => {
      while (!stop) await call().catch(() => {});
    });
    await sleep(300);
    mock.faults.add({ method: 'GET', path, status: 429, headers: { 'retry-after': '1' }, times: 1e9 });
    const counts = [mock.requests.count({ method: 'GET', path })];
    for (let s = 0; s < STORM_S; s++) {
      await sleep(1000);
      counts.push(mock.requests.count({ method: 'GET', path }));
    }
    mock.faults.clear();
    stop = true;
    await Promise.all(loops);
    const windows = counts.slice(2).map((c, i) => c - counts[i + 1]);
    table[name] = {
      windows,
      mean: r3(windows.reduce((a, b) => a + b, 0) / windows.length),
      max: Math.max(...windows),
    };
  }
  await mock.close();
  const sdk = table['billing-sdk'];
  return {
    table,
    goal: goal(
      `429 storm (Retry-After: 1), ${LOOPS} loops: requests per 1 s window after the first`,
      `billing-sdk ${sdk.mean} (max ${sdk.max}) vs openai ${table.openai.mean}, stripe ${table.stripe.mean}`,
      '≤ 1 per window',
      sdk.max <= 1,
    ),
  };
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const walk = await walks();
  const usageRuns = await events();
  const stormRuns = await storm();
  return {
    goals: [walk.goal, ...usageRuns.goals, stormRuns.goal],
    walk: walk.table,
    usage: usageRuns.table,
    storm: stormRuns.table,
  };
}

if (isMain(import.meta)) childMain(send);
