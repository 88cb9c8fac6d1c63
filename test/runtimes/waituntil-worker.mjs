// A Cloudflare Worker (module syntax) whose route is gated with gate.protect and tracks usage after
// its answer. workerd.test.ts bundles it as wrangler does (the browser/worker build). workerd calls
// `fetch(request, env, ctx)`: protect finds `ctx.waitUntil` among its arguments and hands it the
// usage, so the request's context lives until the event is recorded; the answer does not wait.
// The tracker and the gate are made per request here (that keeps working); module-scope-worker.mjs
// keeps them at module scope, as the serverless guide recommends.
// Bindings: BILLING_API_URL, BILLING_API_KEY, SIGNING_KEY, APP_URL (the mock's).
//   GET /usage   (x-account: the account) answers 200 at once; one api_calls event is tracked
import { BillingClient, createAccessCache, createGate, createUsageTracker } from 'billing-sdk';

const NEED = { usage: { product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1 } };

/** The gated route, made for one request: its tracker sends within that request's context. */
function route(env) {
  const billing = new BillingClient({
    baseUrl: env.BILLING_API_URL,
    apiKey: env.BILLING_API_KEY,
    maxRetries: 2,
  });
  const gate = createGate({
    billing,
    access: createAccessCache(billing),
    tracker: createUsageTracker(billing),
    account: (request) => request.headers.get('x-account') ?? undefined,
  });
  return gate.protect(NEED, () => Response.json({ ok: true }));
}

export default {
  async fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    try {
      if (pathname === '/usage') return await route(env)(request, env, ctx);
      return new Response('not found', { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
};
