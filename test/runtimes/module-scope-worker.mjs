// A Cloudflare Worker (module syntax) that keeps its BillingClient, usage tracker and gate at module
// scope, made on the first request (a Worker's bindings arrive with the request) and reused by every
// later one, as most Workers keep their clients. workerd.test.ts bundles it as wrangler does.
// Bindings: BILLING_API_URL, BILLING_API_KEY (the mock's).
//   GET /gated  (x-account) gate.protect with a usage need: one api_calls event, through ctx.waitUntil
//   GET /track  (x-account) tracker.track with the request's ctx.waitUntil: one api_calls event
import { BillingClient, createAccessCache, createGate, createUsageTracker } from 'billing-sdk';

const NEED = { usage: { product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1 } };

/** Made once, by the first request, and shared by all that follow. */
let shared;

function app(env) {
  if (shared) return shared;
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
  shared = { tracker, gated: gate.protect(NEED, () => Response.json({ ok: true })) };
  return shared;
}

export default {
  async fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    try {
      const { tracker, gated } = app(env);
      if (pathname === '/gated') return await gated(request, env, ctx);
      if (pathname === '/track') {
        const account_ref_id = request.headers.get('x-account') ?? 'unknown';
        const { event_key } = await tracker.track(
          { account_ref_id, product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1 },
          { waitUntil: (promise) => ctx.waitUntil(promise) },
        );
        return Response.json({ event_key });
      }
      return new Response('not found', { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
};
