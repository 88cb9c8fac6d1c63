import { describe, expect, it } from 'vitest';
import { createMockApp, DEMO, startMockServer } from '../../src/testing/index.js';
import { collectGarbage, useMockServer } from '../helpers.js';
import { client } from './helpers.js';
import { pause, rawRequest, waitFor } from './raw-http.js';

const A = DEMO.accounts.active;
const AI = DEMO.products.aiAssistant.product_code;
const DEBIT_PATH = '/api/usage/credits/debit/';
const debitBody = (eventKey: string) =>
  JSON.stringify({
    account_ref_id: A,
    product_code: AI,
    meter_code: 'credits',
    quantity: 10,
    event_key: eventKey,
  });

describe('mock server: stall: body', () => {
  const mock = useMockServer();
  const api = client(mock);
  const auth = () => ({ authorization: `Bearer ${mock.server.apiKey}` });
  const balance = () => mock.server.store.balance(A, AI, 'credits');

  it('sends the head and the first half of the real body, chunked, then nothing', async () => {
    const full = Buffer.from((await api.get('products/')).text);
    mock.server.faults.add({ path: '/api/products/', stall: 'body' });
    let headAt = 0;
    const outcome = await rawRequest(`${mock.server.baseUrl}products/`, {
      headers: auth(),
      timeoutMs: 400,
      onHead: () => {
        headAt = performance.now();
      },
    });
    expect(outcome.kind).toBe('timeout');
    if (outcome.kind !== 'timeout') return;
    expect(outcome.status).toBe(200);
    expect(outcome.headers?.['content-type']).toBe('application/json');
    expect(outcome.headers?.['content-length']).toBeUndefined();
    expect(outcome.headers?.['transfer-encoding']).toBe('chunked');
    expect(outcome.headers?.['x-request-id']).toBe(mock.server.requests.last()?.requestId);
    // The head came at once, the deadline ran out waiting for the rest.
    expect(headAt).toBeGreaterThan(0);
    expect(outcome.body.length).toBe(Math.floor(full.length / 2));
    expect(outcome.body.length).toBeGreaterThan(0);
    expect(outcome.body.equals(full.subarray(0, outcome.body.length))).toBe(true);
    expect(() => JSON.parse(outcome.body.toString())).toThrow();
  });

  it('commits the write before stalling, so a retry with the same key is not a second debit', async () => {
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, stall: 'body' });
    let duringStall: unknown;
    const stalled = rawRequest(`${mock.server.baseUrl}usage/credits/debit/`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: debitBody('stall-1'),
      timeoutMs: 300,
      onHead: () => {
        duringStall = { balance: balance(), recorded: mock.server.store.ledger.has('stall-1') };
      },
    });
    const outcome = await stalled;
    expect(outcome).toMatchObject({ kind: 'timeout', status: 200 });
    // Applied while the answer was still under way.
    expect(duringStall).toEqual({ balance: 990, recorded: true });
    const retry = await api.post('usage/credits/debit/', JSON.parse(debitBody('stall-1')));
    expect(retry.body).toEqual({ approved: true, debited: 10, remaining_balance: 990 });
    expect(balance()).toBe(990);
  });

  it('fetch gets the head, then the body read fails on the client timeout', async () => {
    mock.server.faults.add({ path: '/api/products/', stall: 'body' });
    const started = performance.now();
    const response = await fetch(`${mock.server.baseUrl}products/`, {
      headers: auth(),
      signal: AbortSignal.timeout(300),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(mock.server.requests.last()?.requestId);
    const error = await response.text().catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('with a status, stalls the status body and changes nothing', async () => {
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, status: 503, stall: 'body' });
    const outcome = await rawRequest(`${mock.server.baseUrl}usage/credits/debit/`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: debitBody('stall-503'),
      timeoutMs: 300,
    });
    expect(outcome).toMatchObject({ kind: 'timeout', status: 503 });
    if (outcome.kind === 'timeout') {
      const full = '{"detail":"Service unavailable."}';
      expect(outcome.body.toString()).toBe(full.slice(0, Math.floor(full.length / 2)));
    }
    expect(balance()).toBe(1000);
    expect(mock.server.store.ledger.has('stall-503')).toBe(false);
  });

  it('runs after delayMs and is consumed like any fault', async () => {
    mock.server.faults.add({ path: '/api/products/', stall: 'body', delayMs: 150 });
    let headAfter = 0;
    const started = performance.now();
    await rawRequest(`${mock.server.baseUrl}products/`, {
      headers: auth(),
      timeoutMs: 400,
      onHead: () => {
        headAfter = performance.now() - started;
      },
    });
    expect(headAfter).toBeGreaterThanOrEqual(100);
    expect(mock.server.faults.size).toBe(0);
    expect((await api.get('products/')).status).toBe(200);
  });

  it('rejects a stall that could never apply', () => {
    expect(() => mock.server.faults.add({ stall: 'body', reset: 'after' })).toThrow(RangeError);
    expect(() => mock.server.faults.add({ stall: 'head' as 'body' })).toThrow(RangeError);
  });
});

describe('stall: body and the server lifecycle', () => {
  it('close() ends stalled answers instead of waiting for them', async () => {
    const server = await startMockServer();
    server.faults.add({ stall: 'body', times: 3 });
    const pending = Array.from({ length: 3 }, () =>
      rawRequest(`${server.baseUrl}products/`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
        timeoutMs: 10_000,
      }),
    );
    await waitFor(() => server.requests.count() === 3, 'three stalled requests');
    await pause(50);
    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(1000);
    // The clients see the connection drop mid-body rather than their own deadline.
    const outcomes = await Promise.all(pending);
    for (const outcome of outcomes) expect(outcome.kind).not.toBe('timeout');
    expect(server.openConnections()).toBe(0);
  });
});

describe('stall: body in process', () => {
  it('resolves with the head, yields the first half, then errors when the signal aborts', async () => {
    const app = createMockApp();
    app.faults.add({ method: 'POST', stall: 'body' });
    const controller = new AbortController();
    const response = await app.fetch('http://127.0.0.1/api/usage/credits/debit/', {
      method: 'POST',
      headers: { authorization: `Bearer ${app.apiKey}`, 'content-type': 'application/json' },
      body: debitBody('in-proc-stall'),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBeNull();
    expect(app.store.balance(A, AI, 'credits')).toBe(990);
    const reader = response.body!.getReader();
    const first = await reader.read();
    const full = '{"approved":true,"debited":10,"remaining_balance":990}';
    expect(new TextDecoder().decode(first.value)).toBe(full.slice(0, Math.floor(full.length / 2)));
    const next = reader.read();
    const raced = await Promise.race([next.then(() => 'settled'), pause(100).then(() => 'pending')]);
    expect(raced).toBe('pending');
    // The Request the mock built is garbage by now; the abort must not depend on it (undici#3644).
    await collectGarbage();
    controller.abort();
    await expect(next).rejects.toMatchObject({ name: 'AbortError' });
  });
});
