import { describe, expect, it } from 'vitest';
import { createMockApp, DEMO } from '../../src/testing/index.js';

const BASE = 'http://127.0.0.1/api/';
const auth = { authorization: `Bearer ${DEMO.apiKey}` };

describe('createMockApp (in process)', () => {
  it('serves the API through a detached fetch function', async () => {
    const app = createMockApp();
    const { fetch } = app;
    const r = await fetch(`${BASE}account/${DEMO.accounts.active}/status/`, { headers: auth });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ account_ref_id: 'acct_active', is_active: true });
    expect(app.apiKey).toBe(DEMO.apiKey);
    expect(app.signingKey).toBe(DEMO.signingKey);
    // Type-level: usable wherever a client expects the platform fetch.
    const asPlatformFetch: typeof globalThis.fetch = app.fetch;
    expect((await asPlatformFetch(`${BASE}products/`, { headers: auth })).status).toBe(200);
  });

  it('accepts a Request object and builds links on the request origin', async () => {
    const app = createMockApp();
    const r = await app.fetch(
      new Request(`http://mock.local/api/transactions/${DEMO.accounts.active}/`, { headers: auth }),
    );
    expect(((await r.json()) as { next: string }).next).toBe(
      `http://mock.local/api/transactions/${DEMO.accounts.active}/?page=2`,
    );
    const resolved = await app.fetch(
      new Request(
        `http://mock.local/api/resolve/public-url/?account_ref_id=x&product_name=ebook&email=a@b.c`,
        {
          headers: auth,
        },
      ),
    );
    expect(await resolved.json()).toEqual({ public_url: 'http://mock.local/p/pu_ebook' });
  });

  it('uses options.appUrl for hosted URLs when given', async () => {
    const app = createMockApp({ appUrl: 'https://pay.example.test' });
    const r = await app.fetch(
      `${BASE}fix-subscription/?account_ref_id=acct_past_due&subscription_name=pro-plan&tier_name=pro`,
      {
        headers: auth,
      },
    );
    expect(await r.json()).toEqual({ url: `https://pay.example.test/i/${DEMO.pastDueInvoiceId}` });
  });

  it('posts JSON and records the request', async () => {
    const app = createMockApp();
    const r = await app.fetch(`${BASE}usage/credits/debit/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        account_ref_id: DEMO.accounts.active,
        product_code: 'ai-assistant',
        meter_code: 'credits',
        quantity: 100,
        event_key: 'in-proc',
      }),
    });
    expect(await r.json()).toEqual({ approved: true, debited: 100, remaining_balance: 900 });
    expect(app.requests.last()?.body).toMatchObject({ event_key: 'in-proc' });
  });

  it('rejects with TypeError("fetch failed") on a reset; "after" commits first', async () => {
    const app = createMockApp();
    const debit = (key: string) =>
      app.fetch(`${BASE}usage/credits/debit/`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          account_ref_id: DEMO.accounts.active,
          product_code: 'ai-assistant',
          meter_code: 'credits',
          quantity: 1,
          event_key: key,
        }),
      });
    app.faults.add({ reset: 'before' });
    const before = await debit('r1').catch((error: unknown) => error);
    expect(before).toBeInstanceOf(TypeError);
    expect((before as TypeError).message).toBe('fetch failed');
    expect(app.store.balance(DEMO.accounts.active, 'ai-assistant', 'credits')).toBe(1000);

    app.faults.add({ reset: 'after' });
    await expect(debit('r2')).rejects.toThrow('fetch failed');
    expect(app.store.balance(DEMO.accounts.active, 'ai-assistant', 'credits')).toBe(999);
  });

  it('rejects with the abort reason when the signal aborts during a delay', async () => {
    const app = createMockApp();
    app.faults.add({ delayMs: 5_000 });
    const started = performance.now();
    const error = await app
      .fetch(`${BASE}products/`, { headers: auth, signal: AbortSignal.timeout(50) })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(performance.now() - started).toBeLessThan(2_000);
    const already = await app
      .fetch(`${BASE}products/`, { headers: auth, signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect((already as Error).name).toBe('AbortError');
  });

  it('answers status faults and 401s like the server', async () => {
    const app = createMockApp({ apiKey: 'k' });
    expect((await app.fetch(`${BASE}products/`)).status).toBe(401);
    app.faults.add({ status: 429, headers: { 'retry-after': '3' } });
    const r = await app.fetch(`${BASE}products/`, { headers: { 'x-api-key': 'k' } });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
  });

  it('reset() restores the seed and clears faults and the log', async () => {
    const app = createMockApp();
    app.store.setBalance(DEMO.accounts.active, 'ai-assistant', 'credits', 1);
    app.faults.add({ status: 500 });
    await app.fetch(`${BASE}products/`, { headers: auth });
    app.faults.add({ status: 500 });
    app.reset();
    expect(app.store.balance(DEMO.accounts.active, 'ai-assistant', 'credits')).toBe(1000);
    expect(app.faults.size).toBe(0);
    expect(app.requests.count()).toBe(0);
  });

  it('starts empty with seed "empty" but keeps the catalog', async () => {
    const app = createMockApp({ seed: 'empty' });
    expect(app.store.accounts()).toEqual([]);
    const status = await app.fetch(`${BASE}account/${DEMO.accounts.active}/status/`, { headers: auth });
    expect(status.status).toBe(404);
    const products = await app.fetch(`${BASE}products/`, { headers: auth });
    expect(((await products.json()) as { count: number }).count).toBe(6);
  });
});
