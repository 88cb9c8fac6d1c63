// A Cloudflare Worker (module syntax) running tracing.mjs in workerd with the `nodejs_compat` flag,
// which gives it `node:diagnostics_channel` (and the SDK's worker build `process.getBuiltinModule`).
// Bundled like worker.mjs, with `node:*` left to workerd as wrangler does under nodejs_compat.
// Bindings: BILLING_API_URL, BILLING_API_KEY (the mock's).
//   GET /tracing   runs the tracing step, answers what its subscribers saw
import { runTracing } from './tracing.mjs';

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    try {
      if (pathname === '/tracing' && request.method === 'GET') {
        return Response.json(await runTracing({ baseUrl: env.BILLING_API_URL, apiKey: env.BILLING_API_KEY }));
      }
      return new Response('not found', { status: 404 });
    } catch (error) {
      // The test prints this body when it fails: the worker's own stack, not just a status.
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
};
