import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BillingClient,
  createAccessCache,
  createGate,
  createWebhookHandler,
  verifyHostedLink,
  type WebhookEvent,
} from '../../src/index.js';
import { DEMO, type MockServer, startMockServer } from '../../src/testing/index.js';
import { hasChromium, launchChromium } from '../browser/chromium.js';
import { type LoopbackServer, serveFetch } from '../helpers.js';

// A gated page of a server-rendered app, navigated in headless Chromium: the customer without an
// active subscription lands on the mock's hosted paywall page; the payment's lifecycle webhook
// reaches the app's receiver, which drops the cached "no"; the same navigation then shows the page.

const chromiumHere = hasChromium('gate browser test');

const ACCOUNT = DEMO.accounts.pastDue;
const DASHBOARD = '<!doctype html><title>Pro dashboard</title><h1 id="app">Pro dashboard</h1>';
// Longer than the test: only the webhook's invalidation can turn the cached "no" into a "yes".
const TTL_MS = 600_000;

/** The signed-in account, from the app's `session` cookie (a stand-in for a real session lookup). */
function session(request: Request): string | undefined {
  const cookie = request.headers.get('cookie') ?? '';
  return /(?:^|;\s*)session=([^;]+)/.exec(cookie)?.[1];
}

describe.skipIf(!chromiumHere)('a gated page in headless Chromium', () => {
  let mock: MockServer;
  let site: LoopbackServer;
  let browser: Browser;
  let access: ReturnType<typeof createAccessCache>;
  const events: WebhookEvent[] = [];

  beforeAll(async () => {
    mock = await startMockServer();
    const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
    access = createAccessCache(billing, { ttlMs: TTL_MS, denyTtlMs: TTL_MS, staleMs: TTL_MS });
    const gate = createGate({
      billing,
      access,
      account: session,
      paywall: {
        signingKey: mock.signingKey,
        email: (request) => (session(request) ? DEMO.emails.pastDue : undefined),
      },
    });
    const dashboard = gate.protect(
      { subscription: DEMO.tiers.proPro.subscription_name, tier: DEMO.tiers.proPro.label_name },
      () => new Response(DASHBOARD, { headers: { 'content-type': 'text/html; charset=utf-8' } }),
    );
    // The app's receiver: it drops the account's cached answers before onEvent runs.
    const receiver = createWebhookHandler({ access, onEvent: (event) => void events.push(event) });
    site = await serveFetch(async (request) => {
      const { pathname } = new URL(request.url);
      if (pathname === '/dashboard') return dashboard(request);
      if (pathname === '/webhooks/billing' && request.method === 'POST') return receiver(request);
      return new Response('not found', { status: 404 });
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await access?.close();
    await mock?.close();
  });

  const calls = () => ({
    status: mock.requests.count({ method: 'GET', path: `/api/account/${ACCOUNT}/status/` }),
    resolve: mock.requests.count({ method: 'GET', path: '/api/resolve/public-url/' }),
  });

  it('sends the customer to the hosted paywall, then shows the page once the payment webhook arrived', async () => {
    const context = await browser.newContext();
    try {
      await context.addCookies([{ name: 'session', value: ACCOUNT, url: site.url }]);
      const page = await context.newPage();
      const dashboardUrl = `${site.url}/dashboard`;

      // Not active: a 303 from the app, then the mock's hosted tier page, which accepted the `u` token.
      for (const attempt of [1, 2]) {
        const landed = await page.goto(dashboardUrl);
        expect(landed?.status()).toBe(200);
        const redirect = landed?.request().redirectedFrom();
        expect(redirect?.url()).toBe(dashboardUrl);
        expect((await redirect?.response())?.status()).toBe(303);
        const link = page.url();
        expect(link.startsWith(`${mock.appUrl}/t/${DEMO.tiers.proPro.tier_url_id}?u=`)).toBe(true);
        expect((await verifyHostedLink(link, mock.signingKey)).account_ref_id).toBe(ACCOUNT);
        expect(JSON.parse((await page.locator('body').textContent()) ?? '')).toEqual({
          ok: true,
          account_ref_id: ACCOUNT,
          page: 'tier',
          id: DEMO.tiers.proPro.tier_url_id,
        });
        // The first navigation asked the service; the second was answered from the cache, its link reused.
        expect(calls(), `navigation ${attempt}`).toEqual({ status: 1, resolve: 1 });
      }

      // The customer pays: the mock activates the subscription and posts payment-succeeded to the app.
      mock.webhooks.register(`${site.url}/webhooks/billing`);
      const delivery = await mock.lifecycle.paymentSucceeded({ account_ref_id: ACCOUNT });
      expect(delivery, JSON.stringify(delivery.attempts)).toMatchObject({
        delivered: true,
        attempts: [{ status: 200, ok: true }],
      });
      expect(events.map((e) => [e.event, e.account_ref_id, e.is_active])).toEqual([
        ['payment-succeeded', ACCOUNT, true],
      ]);

      // The same navigation: the invalidated account is asked again, and the app's page is shown.
      const shown = await page.goto(dashboardUrl);
      expect(shown?.status()).toBe(200);
      expect(shown?.request().redirectedFrom()).toBeNull();
      expect(page.url()).toBe(dashboardUrl);
      expect(await page.title()).toBe('Pro dashboard');
      expect(await page.locator('#app').textContent()).toBe('Pro dashboard');
      expect(calls()).toEqual({ status: 2, resolve: 1 });
    } finally {
      await context.close();
    }
  }, 30_000);
});
