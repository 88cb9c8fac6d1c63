// A paywall route: the signed-in account gets a signed hosted link to the tier page.
// Run: node examples/paywall-hono.mjs (uses the embedded mock unless BILLING_BASE_URL is set).

import { BillingClient, InvalidRequestError, NotFoundError } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';
import { Hono } from 'hono';

/** Builds the app. `currentUser` stands in for your session middleware. */
export function createApp({ billing, signingKey, currentUser }) {
  const app = new Hono();

  app.get('/upgrade/:plan/:tier', async (c) => {
    const user = currentUser(c);
    if (!user) return c.text('sign in first', 401);
    if (await billing.accounts.isActive({ account_ref_id: user.id, subscription: c.req.param('plan') })) {
      return c.text('already subscribed');
    }
    try {
      const link = await billing.resolve.signedUrl(
        {
          account_ref_id: user.id,
          subscription_name: c.req.param('plan'),
          tier_name: c.req.param('tier'),
          email: user.email,
        },
        { signingKey, expiresIn: '15m' },
      );
      return c.redirect(link, 302);
    } catch (err) {
      if (err instanceof NotFoundError || err instanceof InvalidRequestError)
        return c.text('no such plan', 404);
      throw err;
    }
  });

  return app;
}

// ── Runs the route once against the embedded mock ─────────────────────────────────────────────
if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = process.env.BILLING_BASE_URL ? undefined : await startMockServer();
  try {
    const billing = new BillingClient(mock ? { apiKey: mock.apiKey, baseUrl: mock.baseUrl } : {});
    // The mock's key against the mock; otherwise a key that must be set, never a default.
    const signingKey = mock ? mock.signingKey : process.env.BILLING_SIGNING_KEY;
    if (!signingKey) throw new Error('BILLING_SIGNING_KEY is not set');
    const users = { 'u-1': { id: 'acct_new', email: 'new@example.com' } };
    const app = createApp({ billing, signingKey, currentUser: (c) => users[c.req.header('x-user') ?? ''] });

    const res = await app.request('/upgrade/pro-plan/pro', { headers: { 'x-user': 'u-1' } });
    const link = res.headers.get('location');
    console.log(`GET /upgrade/pro-plan/pro → ${res.status} ${link}`);
    if (res.status !== 302 || !link?.includes('?u=')) throw new Error('expected a redirect to a signed link');

    // The hosted page verifies the token (HS256, account_ref_id) before it shows the checkout.
    const page = await fetch(link);
    const body = await page.json();
    console.log(`hosted page → ${page.status} for account ${body.account_ref_id}`);
    if (page.status !== 200 || body.account_ref_id !== 'acct_new')
      throw new Error('the hosted page refused the link');

    const unknown = await app.request('/upgrade/pro-plan/platinum', { headers: { 'x-user': 'u-1' } });
    console.log(`GET /upgrade/pro-plan/platinum → ${unknown.status}`);
  } finally {
    await mock?.close();
  }
}
