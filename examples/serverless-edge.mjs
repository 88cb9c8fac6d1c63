// Usage on serverless and edge platforms: nothing lost when the platform freezes or drops the
// instance once the answer is out. A Cloudflare-style Worker gated with gate.protect hands its usage
// to the request's ctx.waitUntil; a Vercel-style function passes the platform's waitUntil to the
// tracker; a function that only writes (relay: false) leaves its events to a relay.
// Run: node examples/serverless-edge.mjs (against the embedded mock).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BillingClient, createAccessCache, createGate, createUsageTracker } from 'billing-sdk';
import { fileSpool } from 'billing-sdk/node';
import { DEMO, startMockServer } from 'billing-sdk/testing';

const SEARCH = [
  { subscription: 'pro-plan' },
  {
    usage: {
      product_code: DEMO.products.apiGateway.product_code,
      meter_code: DEMO.meters.apiCalls,
      quantity: 1,
    },
  },
];

/**
 * What a platform does with `waitUntil`: it keeps the instance until every promise handed settled
 * (those handed meanwhile too), then freezes or drops it: no close(), no SIGTERM.
 */
function platform() {
  const held = [];
  return {
    waitUntil: (promise) => void held.push(promise),
    async done() {
      for (let seen = 0; seen < held.length; ) {
        const upTo = held.length;
        await Promise.all(held.slice(seen, upTo));
        seen = upTo;
      }
    },
  };
}

const mock = await startMockServer();
const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl });
const recorded = () => mock.store.usageEvents.filter((e) => e.account_ref_id === DEMO.accounts.active).length;
const seeded = recorded();
const must = (ok, what) => {
  if (!ok) throw new Error(`expected: ${what}`);
};
const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-serverless-'));

try {
  // ── Cloudflare Workers: export default { fetch: gate.protect(need, handler) } ──────────────────
  // workerd calls fetch(request, env, ctx): protect finds ctx.waitUntil and hands it the usage.
  const tracker = createUsageTracker(billing);
  const gate = createGate({
    billing,
    access: createAccessCache(billing),
    tracker,
    account: (request) => request.headers.get('x-account') ?? undefined,
  });
  const worker = { fetch: gate.protect(SEARCH, () => Response.json({ results: 3 })) };
  const ctx = platform();
  const request = new Request('https://app.example/api/search', {
    headers: { 'x-account': DEMO.accounts.active },
  });
  const answer = await worker.fetch(request, {}, ctx);
  console.log(`Worker: GET /api/search → ${answer.status}, usage recorded so far: ${recorded() - seeded}`);
  // The platform sends the body to the client: the usage counts once the answer is delivered.
  await answer.text();
  await ctx.done();
  console.log(
    `  once ctx.waitUntil's promises settled: usage recorded ${recorded() - seeded} (the isolate may go)`,
  );
  must(recorded() - seeded === 1, 'the worker’s event recorded before the isolate went');

  // ── Vercel, Next.js, Netlify: the platform's waitUntil as the tracker's option ────────────────
  // import { waitUntil } from '@vercel/functions' (or Next.js `after`): here, a stand-in.
  const vercel = platform();
  const usage = createUsageTracker(billing, { waitUntil: vercel.waitUntil });
  await usage.track({ ...SEARCH[1].usage, account_ref_id: DEMO.accounts.active, quantity: 2 });
  await vercel.done();
  console.log(`Function: after its waitUntil settled, usage recorded ${recorded() - seeded}`);
  must(recorded() - seeded === 2, 'the function’s event recorded');

  // ── A function that only writes: relay: false, a relay elsewhere sends ────────────────────────
  const writer = createUsageTracker(billing, { spool: fileSpool(dir), relay: false });
  for (let i = 0; i < 3; i++)
    await writer.track({ ...SEARCH[1].usage, account_ref_id: DEMO.accounts.active, quantity: 1 });
  const left = await writer.close();
  console.log(
    `Writer: 3 events in the spool, ${recorded() - seeded - 2} sent, unsent ${left.unsent} (the relay's)`,
  );
  const relay = createUsageTracker(billing, { spool: fileSpool(dir) }); // in production: billing-sdk relay
  await relay.flush();
  await relay.close();
  console.log(`Relay: usage recorded ${recorded() - seeded}: each event once`);
  must(recorded() - seeded === 5, 'the relay sent the writer’s three events once');
  await tracker.close();
  await usage.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
  await mock.close();
}
