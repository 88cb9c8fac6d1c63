import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountState } from '../../src/index.js';
import { DEMO, type MockServer, startMockServer } from '../../src/testing/index.js';
import { hasChromium, launchChromium } from '../browser/chromium.js';
import { uniquePrefix } from '../redis/connect.js';
import { useRedisServer } from '../redis/redis-server.js';
import { type Instance, pageScript, startInstance } from './apps.js';

// Issue 43 end to end: real Chromium on pages of two app instances (Hono on Node, Express) that share
// redisAccessStore on a real redis-server; the mock sends its webhooks to the Express one only.
const chromiumHere = hasChromium('account view drill');
const redis = useRedisServer();

const A = DEMO.accounts.active;
const OTHER = DEMO.accounts.pastDue;
const sessions = new Map([
  ['token-a', A],
  ['token-other', OTHER],
]);
const VIEW = {
  features: { export: { product_code: 'ai-assistant', entitlement_code: 'export' } },
  credits: [{ product_code: 'ai-assistant', meter_code: 'credits' }],
  paywall: { subscription_name: 'pro-plan', tier_name: 'enterprise' },
  streams: { perAccount: 3 },
};

describe.skipIf(!chromiumHere)('the account view in Chromium, two instances on Redis', () => {
  let mock: MockServer;
  let browser: Browser;
  let hono: Instance;
  let exp: Instance;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    mock = await startMockServer();
    const script = await pageScript();
    const prefix = uniquePrefix('view');
    const common = { mock, redisUrl: redis.server.url, prefix, sessions, script, view: VIEW };
    hono = await startInstance({ ...common, kind: 'hono' });
    exp = await startInstance({ ...common, kind: 'express' });
    mock.webhooks.register(`${exp.url}/webhooks`);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await hono?.close();
    await exp?.close();
    await mock?.close();
  });

  /** A page of `instance` under the session `token` (none: signed out). */
  async function open(instance: Instance, token: string | undefined): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    if (token) await context.addCookies([{ name: 'session', value: token, url: instance.url }]);
    const page = await context.newPage();
    await page.goto(instance.url);
    return page;
  }
  const ready = (page: Page) =>
    page.waitForFunction(() => {
      const w = window as unknown as { __ready?: unknown; __error?: unknown };
      return w.__ready ?? w.__error;
    });
  const stateOf = (page: Page) =>
    page.evaluate(() => (window as unknown as { __view: { get(): AccountState } }).__view.get());

  let page: Page;

  it("shows the session's own state after load: the Export button unlocked, the credits", async () => {
    page = await open(hono, 'token-a');
    await ready(page);
    expect(await stateOf(page)).toMatchObject({
      account_ref_id: A,
      active: true,
      features: { export: true },
    });
    expect(await page.isDisabled('#export')).toBe(false);
    expect(await page.textContent('#credits')).toBe(String(DEMO.initialCredits));
  });

  it('a webhook delivered to the other instance changes the page within 1 s', async () => {
    const started = performance.now();
    await mock.lifecycle.cancel({ account_ref_id: A });
    await page.waitForFunction(
      () => (window as unknown as { __view: { get(): AccountState } }).__view.get().active === false,
      undefined,
      { timeout: 1_000 },
    );
    const ms = performance.now() - started;
    expect(ms).toBeLessThan(1_000);
    await mock.lifecycle.paymentSucceeded({ account_ref_id: A });
    await page.waitForFunction(
      () => (window as unknown as { __view: { get(): AccountState } }).__view.get().active === true,
      undefined,
      { timeout: 1_000 },
    );
  });

  it('the balance changes after a debit through the gate', async () => {
    const status = await page.evaluate(async () => (await fetch('/spend', { method: 'POST' })).status);
    expect(status).toBe(200);
    await page.waitForFunction(
      (n) => document.querySelector('#credits')?.textContent === String(n),
      DEMO.initialCredits - 5,
    );
  });

  it('a dropped stream reconnects and catches up with what changed meanwhile', async () => {
    mock.store.setBalance(A, 'ai-assistant', 'credits', 777);
    await hono.dropStreams();
    await page.waitForFunction(() => document.querySelector('#credits')?.textContent === '777', undefined, {
      timeout: 10_000,
    });
    expect(hono.state.stats().streams).toBe(1);
  });

  it("another session's cookie sees only its own account, on the Express instance", async () => {
    const other = await open(exp, 'token-other');
    await ready(other);
    const states = await other.evaluate(() => (window as unknown as { __states: AccountState[] }).__states);
    expect(states.length).toBeGreaterThan(0);
    for (const s of states) expect(s.account_ref_id).toBe(OTHER);
    expect(await other.isDisabled('#export')).toBe(true);
    expect(await other.isHidden('#upgrade')).toBe(false);
    expect(await other.getAttribute('#upgrade', 'href')).toMatch(/^https?:\/\//);
  });

  it('401 without a session', async () => {
    const anonymous = await open(hono, undefined);
    await ready(anonymous);
    expect(await anonymous.evaluate(() => (window as unknown as { __error: unknown }).__error)).toEqual({
      name: 'AccountViewError',
      status: 401,
    });
  });

  it('the per-account stream limit: a tab beyond it is refused 429', async () => {
    const tabs = [await open(hono, 'token-a'), await open(hono, 'token-a')];
    for (const t of tabs) await ready(t);
    const beyond = await open(hono, 'token-a');
    await ready(beyond);
    expect(await beyond.evaluate(() => (window as unknown as { __error: unknown }).__error)).toEqual({
      name: 'AccountViewError',
      status: 429,
    });
  });

  it('nothing any browser received holds the API key or the signing key', () => {
    const sent = hono.sent + exp.sent;
    expect(sent).toContain('event: state');
    expect(sent).not.toContain(mock.apiKey);
    expect(sent).not.toContain(mock.signingKey);
  });
});
