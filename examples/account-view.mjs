// The paywall and its unlock, live: a page's Export button stays locked with an Upgrade link until
// the customer pays (in another tab); the webhook reaches the app, and the open page unlocks within
// a second, without a reload. The browser half is billing-sdk/view; it holds no key.
// Run: node examples/account-view.mjs (uses the embedded mock unless BILLING_BASE_URL is set).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { BillingClient, createAccessCache, createGate, createWebhookHandler } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';
import { createAccountView } from 'billing-sdk/view';
import { Hono } from 'hono';

/** The page: its script imports billing-sdk/view (served here as the package ships it). */
const PAGE = `<!doctype html>
<button id="export" disabled>Export</button> <a id="upgrade" hidden>Upgrade</a>
<script type="module">
  import { createAccountView } from '/billing-sdk-view.js';
  const view = createAccountView({ url: '/billing/state' });
  view.subscribe(() => {
    const state = view.get();
    document.querySelector('#export').disabled = !state.active;
    const upgrade = document.querySelector('#upgrade');
    upgrade.hidden = state.active;
    if (state.paywall_url) upgrade.href = state.paywall_url;
  });
</script>`;

/** Builds the app. `currentUser` stands in for your session middleware (a cookie, here). */
export function createApp({ billing, signingKey, currentUser }) {
  const access = createAccessCache(billing);
  const gate = createGate({
    billing,
    access,
    account: (request) => currentUser(request)?.id,
    paywall: { signingKey, email: (request) => currentUser(request)?.email },
  });
  // What the page may see of its own account: its subscription and where an upgrade goes.
  const state = gate.state({ paywall: { subscription_name: 'pro-plan', tier_name: 'pro' } });
  const app = new Hono();
  app.get('/', (c) => c.html(PAGE));
  app.get('/billing-sdk-view.js', (c) =>
    c.body(readFileSync(fileURLToPath(import.meta.resolve('billing-sdk/view')), 'utf8'), 200, {
      'content-type': 'text/javascript',
    }),
  );
  app.get('/billing/state', state.hono);
  // The webhook invalidates the account (here and, with a shared store, on every instance): its streams hear it.
  const webhook = createWebhookHandler({ access, onEvent: () => {} });
  app.post('/webhooks/billing', (c) => webhook(c.req.raw));
  return { app, close: () => Promise.all([state.close(), access.close()]) };
}

// ── Runs the flow once against the embedded mock ──────────────────────────────────────────────
if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = process.env.BILLING_BASE_URL ? undefined : await startMockServer();
  const billing = new BillingClient(mock ? { apiKey: mock.apiKey, baseUrl: mock.baseUrl } : {});
  const signingKey = mock ? mock.signingKey : process.env.BILLING_SIGNING_KEY;
  if (!signingKey) throw new Error('BILLING_SIGNING_KEY is not set');
  const sessions = { 'token-1': { id: 'acct_past_due', email: 'late@example.com' } };
  const currentUser = (request) => sessions[/session=([^;]+)/.exec(request.headers.get('cookie') ?? '')?.[1]];
  const { app, close } = createApp({ billing, signingKey, currentUser });
  const server = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  mock?.webhooks.register(`${origin}/webhooks/billing`);
  try {
    // The page as a browser runs it (here in Node: the browser sends its cookie by itself).
    const view = createAccountView({
      url: `${origin}/billing/state`,
      fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, cookie: 'session=token-1' } }),
    });
    const first = await view.ready;
    console.log(`Export locked, Upgrade: ${first.paywall_url}`);
    const unlocked = new Promise((resolve) => {
      const stop = view.subscribe(() => {
        if (view.get().active) resolve(stop());
      });
    });
    // The customer pays in another tab; the service sends its webhook to the app.
    const paid = performance.now();
    await mock?.lifecycle.paymentSucceeded({ account_ref_id: 'acct_past_due' });
    await unlocked;
    console.log(
      `paid in another tab: Export unlocked in ${Math.round(performance.now() - paid)} ms, no reload`,
    );
    view.close();
  } finally {
    await close();
    server.close();
    await mock?.close();
  }
}
