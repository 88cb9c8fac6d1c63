import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createAccessCache } from '../../src/index.js';
import { clientFor, useMockServer } from '../helpers.js';
import {
  A,
  AI,
  ask,
  credits,
  DEBIT_PATH,
  EXPORT,
  echoed,
  expectProblem,
  FRAMEWORKS,
  PRO,
  servers,
} from './helpers.js';

// Billing unreachable through each adapter: 'closed' answers 503 + Retry-After, 'open' lets the
// request through with source 'fallback', and credits never fail open.
const mock = useMockServer();
const forever = Number.POSITIVE_INFINITY;

/** A loopback port nothing listens on: billing unreachable, not merely failing. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}/api/`;
}

describe.each(FRAMEWORKS)('billing down, through $name', (framework) => {
  const start = servers(framework, mock);

  it("'closed' (the default): 503 with Retry-After, for API clients and browsers alike", async () => {
    mock.server.faults.add({ path: '/api/account/', status: 503, times: forever });
    const s = await start({ need: PRO });
    const api = await ask(s, { account: A, email: 'a@example.com' });
    expectProblem(api, 503, 'unavailable');
    expect(api.headers.get('retry-after')).toMatch(/^\d+$/);
    const browser = await ask(s, { account: A, email: 'a@example.com', browser: true });
    expectProblem(browser, 503, 'unavailable');
    expect(browser.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(s.handled).toBe(0);
  });

  it("billing not even answering (connection refused): 503 under 'closed'", async () => {
    const billing = clientFor(mock.server, { baseUrl: await deadUrl(), maxRetries: 0 });
    const s = await start({ need: [PRO, EXPORT] }, { billing, access: createAccessCache(billing) });
    const api = await ask(s, { account: A });
    expectProblem(api, 503, 'unavailable');
    expect(api.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(s.handled).toBe(0);
  });

  it("'open': allowed with source 'fallback'", async () => {
    mock.server.faults.add({ path: '/api/account/', status: 503, times: forever });
    mock.server.faults.add({ path: '/api/entitlements/', status: 503, times: forever });
    const s = await start({ need: [PRO, EXPORT] }, { onUnavailable: 'open' });
    const answer = await ask(s, { account: A });
    expect(answer.status).toBe(200);
    expect(s.handled).toBe(1);
    if (framework.seesDecision) {
      expect(echoed(answer)).toEqual({ allowed: true, account_ref_id: A, source: 'fallback' });
    }
  });

  it("credits never fail open: the debit unreachable under 'open' is a 503, the handler never runs", async () => {
    mock.server.faults.add({ method: 'POST', path: DEBIT_PATH, status: 503, times: forever });
    const s = await start({ need: [PRO, credits(10)] }, { onUnavailable: 'open' });
    const answer = await ask(s, { account: A });
    expectProblem(answer, 503, 'unavailable');
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(s.handled).toBe(0);
    expect(mock.server.store.balance(A, AI, 'credits')).toBe(1000);
  });
});
