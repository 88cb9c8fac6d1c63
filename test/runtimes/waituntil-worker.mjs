// A Cloudflare Worker (module syntax) whose route is gated with gate.protect and tracks usage after
// its answer. workerd.test.ts bundles it as wrangler does (the browser/worker build). workerd calls
// `fetch(request, env, ctx)`: protect finds `ctx.waitUntil` among its arguments and hands it the
// usage, so the isolate lives until the event is recorded; the answer does not wait for it.
// Bindings: BILLING_API_URL, BILLING_API_KEY, SIGNING_KEY, APP_URL (the mock's).
//   GET /usage   (x-account: the account) answers 200 at once; one api_calls event is tracked
//   GET /stats   the tracker's stats()
import { BillingClient, createAccessCache, createGate, createUsageTracker } from 'billing-sdk';

// Module scope lives as long as the isolate: one client, tracker and gate for every request.
let app;

function appFor(env) {
  if (app) return app;
  const billing = new BillingClient({
    baseUrl: env.BILLING_API_URL,
    apiKey: env.BILLING_API_KEY,
    maxRetries: 2,
  });
  const tracker = createUsageTracker(billing);
  const gate = createGate({
    billing,
    access: createAccessCache(billing),
    tracker,
    account: (request) => request.headers.get('x-account') ?? undefined,
  });
  const usage = gate.protect(
    { usage: { product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1 } },
    () => Response.json({ ok: true }),
  );
  app = { tracker, usage };
  return app;
}

export default {
  async fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    try {
      const { tracker, usage } = appFor(env);
      if (pathname === '/usage') return await usage(request, env, ctx);
      if (pathname === '/stats') return Response.json(tracker.stats());
      return new Response('not found', { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
};
