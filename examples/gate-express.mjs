// Gate Express routes with createGate: a subscription, an entitlement and credits, each in one line, and
// every "no" answered with something the caller can act on (the paywall for a browser, problem+json for
// an API client). Run: node examples/gate-express.mjs (against the embedded mock; needs express).

import { BillingClient, createAccessCache, createGate } from 'billing-sdk';
import { DEMO, startMockServer } from 'billing-sdk/testing';
import express from 'express';

const AI = DEMO.products.aiAssistant.product_code;

/**
 * Builds the app. `session(req)` stands in for your own authentication: it says which account (an
 * org, a workspace) is asking, and its e-mail for the paywall page.
 */
export function createApp({ billing, access, signingKey, session }) {
  const gate = createGate({
    billing,
    access,
    account: (req) => session(req)?.account,
    paywall: {
      signingKey,
      email: (req) => session(req)?.email,
      // Entitlements and credits have no page of their own: the enterprise tier sells both.
      target: () => ({ subscription_name: 'pro-plan', tier_name: 'enterprise' }),
    },
  });

  const app = express();

  app.get('/reports', gate.express({ subscription: 'pro-plan', tier: 'pro' }), (_req, res) => {
    const { account_ref_id, source } = res.locals.billing;
    res.json({ report: 'Q3', account_ref_id, source });
  });

  // The body is parsed (and could be validated) before the gate: a bad request never costs credits.
  // Credits are debited last, only once the entitlement held, under a key derived from the account,
  // the route and the request's Idempotency-Key: its reuse after a success is refused (422).
  app.post(
    '/summaries',
    express.json(),
    gate.express([
      { entitlement: { product_code: AI, entitlement_code: DEMO.entitlements.export } },
      { credits: { product_code: AI, meter_code: DEMO.meters.credits, quantity: (req) => req.body.pages } },
    ]),
    (_req, res) => {
      const { debit } = res.locals.billing;
      res.json({ summary: '…', debited: debit.debited, remaining_balance: debit.remaining_balance });
    },
  );

  return app;
}

// ── Runs the routes against the embedded mock ─────────────────────────────────────────────────
if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = await startMockServer();
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl });
  const access = createAccessCache(billing);
  const sessions = {
    'sess-active': { account: DEMO.accounts.active, email: DEMO.emails.active },
    'sess-past-due': { account: DEMO.accounts.pastDue, email: DEMO.emails.pastDue },
  };
  const session = (req) => sessions[/(?:^|;\s*)session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1] ?? ''];
  const app = createApp({ billing, access, signingKey: mock.signingKey, session });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;

  /** One request, printed as the caller sees the answer. */
  async function ask(label, method, path, { as, accept = 'application/json', key, body } = {}) {
    const headers = { accept };
    if (as) headers.cookie = `session=${as}`;
    if (key) headers['idempotency-key'] = key;
    if (body) headers['content-type'] = 'application/json';
    const res = await fetch(`${origin}${path}`, {
      method,
      headers,
      body: body && JSON.stringify(body),
      redirect: 'manual',
    });
    const text = await res.text();
    const shown =
      res.status === 303 ? res.headers.get('location') : `${res.headers.get('content-type')} ${text}`;
    // Links print with their token cut short: `?u=` and the start of the signed JWT.
    console.log(
      `${label}\n  ${method} ${path} → ${res.status} ${shown.replace(/(\?u=[\w-]{12})[\w.-]*/g, '$1…')}`,
    );
    return { status: res.status, location: res.headers.get('location'), body: text ? JSON.parse(text) : {} };
  }
  const must = (ok, what) => {
    if (!ok) throw new Error(`expected ${what}`);
  };
  const debits = () => mock.requests.count({ method: 'POST', path: '/api/usage/credits/debit/' });

  try {
    const allowed = await ask('an active pro-plan account:', 'GET', '/reports', { as: 'sess-active' });
    must(
      allowed.status === 200 && allowed.body.account_ref_id === DEMO.accounts.active,
      '200 for acct_active',
    );

    const nobody = await ask('no session:', 'GET', '/reports');
    must(nobody.status === 401 && nobody.body.reason === 'unauthenticated', '401 unauthenticated');

    const api = await ask('a past-due account, from an API client:', 'GET', '/reports', {
      as: 'sess-past-due',
    });
    must(
      api.status === 402 && api.body.reason === 'inactive' && api.body.upgrade_url,
      '402 with upgrade_url',
    );

    const page = await ask('the same account, from a browser:', 'GET', '/reports', {
      as: 'sess-past-due',
      accept: 'text/html,application/xhtml+xml',
    });
    must(page.status === 303 && page.location.includes('?u='), '303 to a signed paywall link');
    const hosted = await (await fetch(page.location)).json();
    console.log(`  the hosted page verifies the link: account ${hosted.account_ref_id}`);
    must(hosted.account_ref_id === DEMO.accounts.pastDue, 'the hosted page to accept the link');

    const first = await ask('5 pages of credits, with an Idempotency-Key:', 'POST', '/summaries', {
      as: 'sess-active',
      key: 'summary-7f3a',
      body: { pages: 5 },
    });
    const retry = await ask('the client sends the same key again (its answer lost):', 'POST', '/summaries', {
      as: 'sess-active',
      key: 'summary-7f3a',
      body: { pages: 5 },
    });
    const balance = await billing.usage.balance({
      account_ref_id: DEMO.accounts.active,
      product_code: AI,
      meter_code: DEMO.meters.credits,
    });
    console.log(`  balance ${balance.balance}: the key was used once, charged once, the work done once`);
    must(
      first.status === 200 &&
        retry.status === 422 &&
        retry.body.reason === 'idempotency_key_used' &&
        balance.balance === 995,
      'one debit of 5, the reuse refused 422',
    );

    const poor = await ask('more credits than the balance:', 'POST', '/summaries', {
      as: 'sess-active',
      body: { pages: 5_000 },
    });
    must(poor.status === 402 && poor.body.remaining_balance === 995, '402 insufficient_credits');

    const before = debits();
    const unentitled = await ask('no export entitlement:', 'POST', '/summaries', {
      as: 'sess-past-due',
      body: { pages: 5 },
    });
    console.log(`  debit requests sent for it: ${debits() - before}`);
    must(unentitled.body.reason === 'not_entitled' && debits() === before, 'not_entitled without a debit');
  } finally {
    server.closeAllConnections();
    server.close();
    await access.close();
    await mock.close();
  }
}
