import { describe, expect, it } from 'vitest';
import { createGate, InvalidRequestError } from '../../src/index.js';
import { useMockServer } from '../helpers.js';
import {
  A,
  AI,
  ask,
  credits,
  DEBIT_PATH,
  echoed,
  expectProblem,
  FRAMEWORKS,
  PRO,
  servers,
  setupFor,
  USAGE,
} from './helpers.js';

// Each adapter in its real framework on loopback, against the embedded mock: nothing stubbed.
// The answers to a "no" are in paywall.test.ts, billing down in unavailable.test.ts.
const mock = useMockServer();

describe.each(FRAMEWORKS)('gate in $name, on loopback', (framework) => {
  const start = servers(framework, mock);

  it('allows an active subscriber, first from the service, then from the cache', async () => {
    const s = await start({ need: PRO });
    const first = await ask(s, { account: A });
    expect(first.status).toBe(200);
    const second = await ask(s, { account: A, browser: true });
    expect(second.status).toBe(200);
    expect(s.handled).toBe(2);
    if (framework.seesDecision) {
      expect(echoed(first)).toEqual({ allowed: true, account_ref_id: A, source: 'live' });
      expect(echoed(second)).toEqual({ allowed: true, account_ref_id: A, source: 'cache' });
    }
    expect(mock.server.requests.count({ path: `/api/account/${A}/status/` })).toBe(1);
  });

  it('answers nobody with 401 problem+json, to an API client and to a browser', async () => {
    const s = await start({ need: PRO });
    expectProblem(await ask(s), 401, 'unauthenticated');
    expectProblem(await ask(s, { browser: true }), 401, 'unauthenticated');
    expect(s.handled).toBe(0);
  });

  it('a throwing or rejecting account() fails the request the framework way (500), never allowed', async () => {
    for (const account of [
      () => {
        throw new Error('session store down');
      },
      () => Promise.reject(new Error('session store down')),
    ]) {
      const s = await start({ need: [PRO, credits(10)] }, { account });
      const answer = await ask(s, { account: A });
      expect(answer.status).toBe(500);
      expect(s.handled).toBe(0);
      expect(s.errors).toEqual([expect.objectContaining({ message: 'session store down' })]);
    }
    expect(mock.server.requests.count({ method: 'POST', path: DEBIT_PATH })).toBe(0);
  });
});

describe('needs are checked when the middleware is made', () => {
  it.each([
    ['an empty subscription', { subscription: '' }],
    ['an entitlement without a code', { entitlement: { product_code: AI, entitlement_code: '' } }],
    ['credits of a zero quantity', { credits: { product_code: AI, meter_code: 'credits', quantity: 0 } }],
    ['nothing known', { plan: 'pro' }],
  ])('%s throws InvalidRequestError from every adapter, at once', (_name, bad) => {
    const { billing, access } = setupFor(mock.server);
    const gate = createGate({ billing, access, account: () => A });
    const need = bad as unknown as typeof PRO;
    for (const make of [
      () => gate.express(need),
      () => gate.fastify(need),
      () => gate.hono(need),
      () => gate.protect(need, () => new Response('ok')),
    ]) {
      expect(make).toThrow(InvalidRequestError);
    }
  });

  it('a usage need without a tracker is refused at once, naming the option', () => {
    const { billing, access } = setupFor(mock.server);
    const gate = createGate({ billing, access, account: () => A });
    expect(() => gate.express(USAGE)).toThrow(/tracker/);
  });
});
