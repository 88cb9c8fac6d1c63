import { describe, expect, it } from 'vitest';
import { createMockApp, DEMO, REQUEST_ID_HEADER } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client } from './helpers.js';

const ID = /^req_[0-9a-f]{24}$/;
const DEBIT_PATH = '/api/usage/credits/debit/';
const debitBody = (eventKey: string) => ({
  account_ref_id: DEMO.accounts.active,
  product_code: DEMO.products.aiAssistant.product_code,
  meter_code: 'credits',
  quantity: 1,
  event_key: eventKey,
});

describe('mock server: x-request-id', () => {
  const mock = useMockServer();
  const api = client(mock);

  it('names the header in lowercase', () => {
    expect(REQUEST_ID_HEADER).toBe('x-request-id');
  });

  it('sends a fresh id on every /api/ answer and records the same id', async () => {
    mock.server.faults.add({ path: '/api/tiers/', status: 429, headers: { 'retry-after': '0' } });
    mock.server.faults.add({
      path: '/api/tiers/',
      status: 503,
      body: 'down',
      headers: { 'content-type': 'text/plain' },
    });
    const answers = [
      await api.get('products/'), // 200 from the handler
      await api.get('products/', { authorization: 'Bearer wrong' }), // 401
      await api.get('no-such-route/'), // 404
      await api.post('usage/credits/debit/', { quantity: 0 }), // 400
      await api.get('tiers/'), // 429 fault
      await api.get('tiers/'), // 503 fault with a custom body
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 400, 429, 503]);
    const ids = answers.map((a) => a.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(ID);
    expect(new Set(ids).size).toBe(ids.length);
    expect(mock.server.requests.all().map((r) => r.requestId)).toEqual(ids);
  });

  it('keeps ids unique across concurrent requests and across reset()', async () => {
    const first = await Promise.all(Array.from({ length: 40 }, () => api.get('products/')));
    mock.server.reset();
    const second = await Promise.all(Array.from({ length: 40 }, () => api.get('products/')));
    const ids = [...first, ...second].map((a) => a.headers.get('x-request-id'));
    expect(new Set(ids).size).toBe(80);
    // Concurrent: each answer still carries the id of its own record.
    expect(new Set(mock.server.requests.all().map((r) => r.requestId))).toEqual(
      new Set(second.map((a) => a.headers.get('x-request-id'))),
    );
  });

  it("lets a fault's headers fix the id, on a status fault and on the handler's answer", async () => {
    mock.server.faults.add({ path: '/api/products/', status: 503, headers: { 'X-Request-Id': 'req_fixed' } });
    mock.server.faults.add({
      path: '/api/products/',
      delayMs: 1,
      headers: { 'x-request-id': 'req_handler' },
    });
    const faulted = await api.get('products/');
    const handled = await api.get('products/');
    expect([faulted.status, handled.status]).toEqual([503, 200]);
    expect(faulted.headers.get('x-request-id')).toBe('req_fixed');
    expect(handled.headers.get('x-request-id')).toBe('req_handler');
    expect(mock.server.requests.all().map((r) => r.requestId)).toEqual(['req_fixed', 'req_handler']);
    // Only under the fault: the next request gets a fresh id again.
    expect((await api.get('products/')).headers.get('x-request-id')).toMatch(ID);
  });

  it('records an id for a request whose answer was lost to a reset', async () => {
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, reset: 'after' });
    await expect(api.post('usage/credits/debit/', debitBody('rid-reset'))).rejects.toThrow(TypeError);
    expect(mock.server.requests.last()?.requestId).toMatch(ID);
  });

  it('sends no id outside /api/ (hosted pages are not API answers)', async () => {
    const page = await fetch(`${mock.server.appUrl}/i/${DEMO.pastDueInvoiceId}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-request-id')).toBeNull();
  });
});

describe('x-request-id with CORS and in process', () => {
  const cors = useMockServer({ cors: true });

  it('exposes the header to browser pages', async () => {
    const r = await fetch(`${cors.server.baseUrl}products/`, {
      headers: { 'x-api-key': cors.server.apiKey },
    });
    expect(r.headers.get('x-request-id')).toMatch(ID);
    const exposed = (r.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'retry-after']));
  });

  it('is sent and recorded by createMockApp too', async () => {
    const app = createMockApp();
    app.faults.add({ status: 429, headers: { 'retry-after': '0' } });
    const auth = { authorization: `Bearer ${app.apiKey}` };
    const limited = await app.fetch('http://127.0.0.1/api/products/', { headers: auth });
    const ok = await app.fetch('http://127.0.0.1/api/products/', { headers: auth });
    expect([limited.status, ok.status]).toEqual([429, 200]);
    expect(app.requests.all().map((r) => r.requestId)).toEqual([
      limited.headers.get('x-request-id'),
      ok.headers.get('x-request-id'),
    ]);
    expect(ok.headers.get('x-request-id')).toMatch(ID);
  });
});
