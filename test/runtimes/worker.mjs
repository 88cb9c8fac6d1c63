// A Cloudflare Worker (module syntax) running the shared scenario in workerd. workerd.test.ts bundles
// it as wrangler does, so `billing-sdk` in scenario.mjs becomes the browser/worker build. Bindings:
// BILLING_API_URL, BILLING_API_KEY, SIGNING_KEY, APP_URL (the mock's).
//   GET  /scenario          runs the scenario, answers its results
//   POST /webhooks/billing  createWebhookHandler
//   GET  /events            what the webhook handler's onEvent saw
import { createReceiver, runScenario } from './scenario.mjs';

// Module scope lives as long as the isolate: enough for one Miniflare instance in a test. A real
// worker would keep this in a Durable Object or KV, since isolates come and go.
const seen = [];
let receiver;

function config(env) {
  return {
    baseUrl: env.BILLING_API_URL,
    apiKey: env.BILLING_API_KEY,
    signingKey: env.SIGNING_KEY,
    appUrl: env.APP_URL,
  };
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    try {
      if (pathname === '/scenario' && request.method === 'GET') {
        return Response.json(await runScenario(config(env)));
      }
      if (pathname === '/webhooks/billing') {
        receiver ??= createReceiver(config(env), (event) => seen.push(event));
        return await receiver(request);
      }
      if (pathname === '/events' && request.method === 'GET') return Response.json(seen);
      return new Response('not found', { status: 404 });
    } catch (error) {
      // The test prints this body when it fails: the worker's own stack, not just a status.
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
};
