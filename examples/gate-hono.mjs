// Gate Hono routes with createGate: usage tracked only after a 2xx answer, credits debited before the
// handler, and what each route answers when billing is down ('closed' and 'open').
// Run: node examples/gate-hono.mjs (against the embedded mock; needs hono and @hono/node-server).

import { serve } from '@hono/node-server';
import { BillingClient, createAccessCache, createGate, createUsageTracker } from 'billing-sdk';
import { DEMO, startMockServer } from 'billing-sdk/testing';
import { Hono } from 'hono';

const SEARCH = [
  { subscription: 'pro-plan' },
  // Tracked once the handler answered 2xx: a failed search is never billed.
  {
    usage: {
      product_code: DEMO.products.apiGateway.product_code,
      meter_code: DEMO.meters.apiCalls,
      quantity: 1,
    },
  },
];
const SUMMARY = {
  credits: {
    product_code: DEMO.products.aiAssistant.product_code,
    meter_code: DEMO.meters.credits,
    quantity: 10,
  },
};

/**
 * Builds the app. `options` are createGate's; `session(request)` stands in for your own
 * authentication (here a bearer token naming the account).
 */
export function createApp(options) {
  const gate = createGate(options);
  const app = new Hono();
  app.get('/api/search', gate.hono(SEARCH), (c) => c.json({ results: 3, source: c.get('billing').source }));
  app.get('/api/search/broken', gate.hono(SEARCH), (c) => c.json({ error: 'index offline' }, 500));
  app.post('/api/summaries', gate.hono(SUMMARY), (c) => {
    const { debit } = c.get('billing');
    return c.json({ summary: '…', remaining_balance: debit.remaining_balance });
  });
  return app;
}

// ── Runs the routes against the embedded mock ─────────────────────────────────────────────────
if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = await startMockServer();
  // maxRetries: 0 only so that the outage below is answered at once rather than after the retries.
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, maxRetries: 0 });
  const tracker = createUsageTracker(billing);
  const account = (request) => request.headers.get('authorization')?.replace(/^Bearer /, '') || undefined;
  const closed = createAccessCache(billing);
  const open = createAccessCache(billing);
  const apps = [
    createApp({ billing, access: closed, account, tracker }), // onUnavailable: 'closed', the default
    createApp({ billing, access: open, account, tracker, onUnavailable: 'open' }),
  ];
  const servers = [];
  const [closedOrigin, openOrigin] = await Promise.all(
    apps.map(
      (app) =>
        new Promise((resolve) => {
          const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
            resolve(`http://127.0.0.1:${info.port}`),
          );
          servers.push(server);
        }),
    ),
  );

  /** One request, printed as the caller sees the answer. */
  async function ask(origin, method, path, as) {
    const headers = as ? { authorization: `Bearer ${as}` } : {};
    const res = await fetch(`${origin}${path}`, { method, headers });
    const text = await res.text();
    const retryAfter = res.headers.get('retry-after');
    console.log(
      `  ${method} ${path} → ${res.status}${retryAfter ? ` (Retry-After: ${retryAfter})` : ''} ${text}`,
    );
    return { status: res.status, body: JSON.parse(text) };
  }
  const must = (ok, what) => {
    if (!ok) throw new Error(`expected ${what}`);
  };
  const usageEvents = () => mock.requests.count({ method: 'POST', path: '/api/usage/events/' });

  try {
    console.log('usage is tracked after a 2xx answer only:');
    const ok = await ask(closedOrigin, 'GET', '/api/search', DEMO.accounts.active);
    const broken = await ask(closedOrigin, 'GET', '/api/search/broken', DEMO.accounts.active);
    await tracker.flush();
    console.log(`  usage events recorded: ${usageEvents()} (the 500 was not billed)`);
    must(ok.status === 200 && broken.status === 500 && usageEvents() === 1, 'one usage event, for the 200');

    console.log('refused:');
    const nobody = await ask(closedOrigin, 'GET', '/api/search');
    const inactive = await ask(closedOrigin, 'GET', '/api/search', DEMO.accounts.pastDue);
    const noCredits = await ask(closedOrigin, 'POST', '/api/summaries', DEMO.accounts.empty);
    must(nobody.status === 401 && inactive.body.reason === 'inactive', '401, then 402 inactive');
    must(noCredits.status === 402, 'a refused debit to answer 402');

    console.log('credits are debited before the handler:');
    const summary = await ask(closedOrigin, 'POST', '/api/summaries', DEMO.accounts.active);
    must(summary.body.remaining_balance === 990, '10 credits debited');

    // Billing goes down. acct_multi was never asked, so neither access cache has an answer for it.
    mock.faults.add({ path: /^\/api\//, status: 503, times: Infinity });
    console.log("billing is down, onUnavailable: 'closed' (the default):");
    const shut = await ask(closedOrigin, 'GET', '/api/search', DEMO.accounts.multi);
    must(shut.status === 503 && shut.body.reason === 'unavailable', '503 unavailable');
    console.log("billing is down, onUnavailable: 'open':");
    const through = await ask(openOrigin, 'GET', '/api/search', DEMO.accounts.multi);
    must(through.status === 200 && through.body.source === 'fallback', "200 with source 'fallback'");
    const unpaid = await ask(openOrigin, 'POST', '/api/summaries', DEMO.accounts.multi);
    must(unpaid.status === 503, 'credits never to fail open');
    mock.faults.clear();
  } finally {
    for (const server of servers) server.close();
    await tracker.close();
    await Promise.all([closed.close(), open.close()]);
    await mock.close();
  }
}
