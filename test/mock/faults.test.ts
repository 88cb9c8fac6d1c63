import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { until, useMockServer } from '../helpers.js';
import { client, obj } from './helpers.js';

const A = DEMO.accounts.active;
const AI = DEMO.products.aiAssistant.product_code;
const DEBIT_PATH = '/api/usage/credits/debit/';

describe('mock server: fault injection', () => {
  const mock = useMockServer();
  const api = client(mock);

  const balance = () => mock.server.store.balance(A, AI, 'credits');
  const debit = (eventKey: string, quantity = 10) =>
    api.post('usage/credits/debit/', {
      account_ref_id: A,
      product_code: AI,
      meter_code: 'credits',
      quantity,
      event_key: eventKey,
    });

  it('answers a status fault with Retry-After and the default 429 body, once', async () => {
    mock.server.faults.add({ path: '/api/products/', status: 429, headers: { 'retry-after': '1' } });
    const first = await api.get('products/');
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(first.headers.get('content-type')).toBe('application/json');
    expect(first.body).toEqual({ detail: 'Request was throttled.' });
    const second = await api.get('products/');
    expect(second.status).toBe(200);
    expect(mock.server.faults.size).toBe(0);
  });

  it('replaces the handler: a status fault on a debit changes nothing', async () => {
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, status: 503 });
    const r = await debit('f-503');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ detail: 'Service unavailable.' });
    expect(balance()).toBe(1000);
    expect(mock.server.store.ledger.has('f-503')).toBe(false);
  });

  it('uses a custom raw body and counts `times`', async () => {
    mock.server.faults.add({
      path: /^\/api\/tiers\//,
      status: 500,
      body: 'boom',
      headers: { 'content-type': 'text/plain' },
      times: 2,
    });
    for (let i = 0; i < 2; i++) {
      const r = await api.get('tiers/');
      expect(r.status).toBe(500);
      expect(r.text).toBe('boom');
      expect(r.headers.get('content-type')).toBe('text/plain');
    }
    expect((await api.get('tiers/')).status).toBe(200);
  });

  it('matches method and path prefix, and consumes faults in order', async () => {
    mock.server.faults.add({ method: 'POST', path: '/api/invoices/', status: 409 });
    mock.server.faults.add({ path: '/api/invoices/', status: 502 });
    mock.server.faults.add({ path: '/api/invoices/', status: 504 });
    // GET skips the POST-only fault and takes the first GET-compatible one.
    expect((await api.get(`invoices/?account_ref_id=${A}`)).status).toBe(502);
    expect((await api.get(`invoices/?account_ref_id=${A}`)).status).toBe(504);
    expect((await api.get(`invoices/?account_ref_id=${A}`)).status).toBe(200);
    expect(mock.server.faults.pending()).toEqual([expect.objectContaining({ status: 409 })]);
    mock.server.faults.clear();
    expect(mock.server.faults.size).toBe(0);
  });

  it('an Infinity fault keeps matching until cleared', async () => {
    mock.server.faults.add({ path: '/api/products/', status: 500, times: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 5; i++) expect((await api.get('products/')).status).toBe(500);
    mock.server.faults.clear();
    expect((await api.get('products/')).status).toBe(200);
  });

  it('does not apply to hosted pages outside /api/', async () => {
    mock.server.faults.add({ status: 500 });
    const page = await fetch(`${mock.server.appUrl}/i/${DEMO.pastDueInvoiceId}`);
    expect(page.status).toBe(200);
    expect(mock.server.faults.size).toBe(1);
  });

  it('delays, then runs the real handler', async () => {
    mock.server.faults.add({ path: '/api/products/', delayMs: 300 });
    const started = performance.now();
    const r = await api.get('products/');
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(r.status).toBe(200);
    expect(obj(r.body).count).toBe(6);
  });

  it('delay plus status answers the status after the wait', async () => {
    mock.server.faults.add({
      path: '/api/products/',
      delayMs: 150,
      status: 429,
      headers: { 'retry-after': '0' },
    });
    const started = performance.now();
    expect((await api.get('products/')).status).toBe(429);
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('stops a delayed request when the client goes away (no state change)', async () => {
    // Two debits under the same delay, the one that goes away first: had its wait not been stopped,
    // its timer would fire (and debit) before the other's, whose answer is the event waited on.
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, delayMs: 400, times: 2 });
    const post = (eventKey: string, signal?: AbortSignal) =>
      fetch(`${mock.server.baseUrl}usage/credits/debit/`, {
        method: 'POST',
        ...(signal ? { signal } : {}),
        headers: { authorization: `Bearer ${mock.server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          account_ref_id: A,
          product_code: AI,
          meter_code: 'credits',
          quantity: 10,
          event_key: eventKey,
        }),
      });
    const controller = new AbortController();
    const gone = post('f-gone', controller.signal);
    await until(() => mock.server.requests.count() === 1);
    const kept = post('f-kept');
    await until(() => mock.server.requests.count() === 2);
    controller.abort();
    await expect(gone).rejects.toThrow();
    expect((await kept).status).toBe(200);
    expect(mock.server.store.ledger.has('f-kept')).toBe(true);
    expect(balance()).toBe(990);
    expect(mock.server.store.ledger.has('f-gone')).toBe(false);
  });

  it('reset before: the connection drops and nothing changes', async () => {
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, reset: 'before' });
    await expect(debit('f-before')).rejects.toThrow(TypeError);
    expect(balance()).toBe(1000);
    expect(mock.server.store.ledger.has('f-before')).toBe(false);
    // The request still reached the mock and was recorded.
    expect(mock.server.requests.count({ method: 'POST', path: DEBIT_PATH })).toBe(1);
    // A retry with the same key then debits exactly once.
    expect((await debit('f-before')).body).toEqual({ approved: true, debited: 10, remaining_balance: 990 });
  });

  it('reset after: the change is committed but the answer is lost', async () => {
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, reset: 'after' });
    await expect(debit('f-after')).rejects.toThrow(TypeError);
    expect(balance()).toBe(990);
    expect(mock.server.store.ledger.has('f-after')).toBe(true);
    // The retry with the same event_key is answered from the ledger, without a second debit.
    const retry = await debit('f-after');
    expect(retry.body).toEqual({ approved: true, debited: 10, remaining_balance: 990 });
    expect(balance()).toBe(990);
  });

  it('reset after on invoice creation: the invoice exists though the client saw an error', async () => {
    const before = mock.server.store.invoices({ account_ref_id: A }).length;
    mock.server.faults.add({ path: '/api/invoices/create/', reset: 'after' });
    await expect(
      api.post('invoices/create/', {
        product_manage_id: DEMO.products.ebook.manage_id,
        amount: 19,
        customer_email: DEMO.emails.active,
        account_ref_id: A,
      }),
    ).rejects.toThrow('fetch failed');
    expect(mock.server.store.invoices({ account_ref_id: A }).length).toBe(before + 1);
  });

  it('rejects faults that could never apply', () => {
    expect(() => mock.server.faults.add({ times: 0 })).toThrow(RangeError);
    expect(() => mock.server.faults.add({ delayMs: -1 })).toThrow(RangeError);
  });
});
