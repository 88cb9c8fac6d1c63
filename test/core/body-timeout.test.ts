import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APITimeoutError, APIUserAbortError, BillingClient } from '../../src/index.js';
import { caught, type LoopbackServer, serveNode } from '../helpers.js';

// A server no mock fault can imitate: it sends the headers and half a body, then stalls.
let stalling: LoopbackServer;
let requests = 0;
beforeAll(async () => {
  stalling = await serveNode((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"count": 1, "results": [');
  });
});
afterAll(() => stalling.close());

const client = (timeout: number) =>
  new BillingClient({
    apiKey: 'k',
    baseUrl: `${stalling.url}/api/`,
    timeout,
    maxRetries: 0,
    logLevel: 'off',
  });

describe('a body that stalls after the headers', () => {
  it('times out within the same per-attempt timeout', async () => {
    const started = performance.now();
    const err = await caught(() => client(300).invoices.list({ account_ref_id: 'a' }));
    expect(err).toBeInstanceOf(APITimeoutError);
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(2_000);
  });

  it('is retried like any timeout', async () => {
    requests = 0;
    const err = await caught(() =>
      client(150).withOptions({ maxRetries: 1 }).invoices.list({ account_ref_id: 'a' }, { maxRetries: 1 }),
    );
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(requests).toBe(2);
  });

  it("is cut short by the caller's signal", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const err = await caught(() =>
      client(10_000).invoices.list({ account_ref_id: 'a' }, { signal: controller.signal }),
    );
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
