import { describe, expect, it } from 'vitest';
import {
  type AccessCache,
  createAccessCache,
  createGate,
  type GateDecision,
  InvalidRequestError,
} from '../../src/index.js';
import { cacheWithClock, manualClock, refreshed } from '../access/helpers.js';
import { caught, clientFor, useMockServer } from '../helpers.js';
import { A, EXPORT, PAST_DUE, PRO, SSO } from './helpers.js';

const mock = useMockServer();
const STATUS = { method: 'GET', path: '/api/account/' } as const;

/** A request of `account`, as an API client asks. */
const asking = (account: string) =>
  new Request('http://app.test/reports', { headers: { 'x-account': account, accept: 'application/json' } });

/** What a decision says, without its Response (built anew each time). */
const gist = (d: GateDecision) =>
  d.allowed ? d : { allowed: d.allowed, reason: d.reason, status: d.status, account: d.account_ref_id };

// A gated request whose answers are fresh in the access cache: the same decisions as from the
// service, counted as hits, nothing more asked.
describe('createGate: answers fresh in memory', () => {
  it('count one hit per lookup, allowed or denied, and ask the service nothing more', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing, { ttlMs: 60_000, denyTtlMs: 60_000 });
    const gate = createGate({ billing, access, account: (r) => r.headers.get('x-account') ?? undefined });
    try {
      // First lookups: from the service.
      expect(await gate.check(asking(A), [PRO, EXPORT])).toMatchObject({ allowed: true, source: 'live' });
      expect(await gate.check(asking(PAST_DUE), PRO)).toMatchObject({ allowed: false, reason: 'inactive' });
      const asked = mock.server.requests.count();
      const before = access.stats();

      expect(await gate.check(asking(A), [PRO, EXPORT])).toEqual({
        allowed: true,
        account_ref_id: A,
        source: 'cache',
      });
      expect(access.stats().hits - before.hits).toBe(2);
      const denied = await gate.check(asking(PAST_DUE), PRO);
      expect(gist(denied)).toEqual({ allowed: false, reason: 'inactive', status: 402, account: PAST_DUE });
      expect(access.stats().hits - before.hits).toBe(3);
      expect(access.stats().misses).toBe(before.misses);
      expect(mock.server.requests.count()).toBe(asked);
    } finally {
      await access.close();
    }
  });

  it('a fresh "yes" beside a part memory lacks waits for that part: the decision is the whole', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    const gate = createGate({ billing, access, account: (r) => r.headers.get('x-account') ?? undefined });
    try {
      await gate.check(asking(A), PRO);
      const statusAsked = mock.server.requests.count(STATUS);
      // PRO is fresh, SSO never asked: one request, and its "no" decides.
      const decision = await gate.check(asking(A), [PRO, SSO]);
      expect(gist(decision)).toEqual({ allowed: false, reason: 'not_entitled', status: 402, account: A });
      expect(mock.server.requests.count(STATUS)).toBe(statusAsked);
      expect(mock.server.requests.count({ method: 'GET', path: '/api/entitlements/' })).toBe(1);
    } finally {
      await access.close();
    }
  });

  it('decides the same for a synchronous and an asynchronous account, fresh or not', async () => {
    const billing = clientFor(mock.server);
    // One cache each: both gates meet every answer first from the service, then from memory.
    const access = createAccessCache(billing);
    const other = createAccessCache(billing);
    const read = (r: Request) => r.headers.get('x-account') ?? undefined;
    const sync = createGate({ billing, access, account: read });
    const async = createGate({ billing, access: other, account: async (r) => read(r) });
    try {
      for (let round = 0; round < 2; round++) {
        for (const account of [A, PAST_DUE, '']) {
          for (const need of [PRO, EXPORT, [PRO, EXPORT]]) {
            const a = gist(await sync.check(asking(account), need));
            const b = gist(await async.check(asking(account), need));
            expect(a, `${account} ${JSON.stringify(need)} round ${round}`).toEqual(b);
          }
        }
      }
    } finally {
      await access.close();
      await other.close();
    }
  });

  it("says where its answer came from: 'stale' past the ttl, and 'live' from an access cache that does not say", async () => {
    const billing = clientFor(mock.server);
    const clock = manualClock();
    const access = cacheWithClock(billing, { ttlMs: 1_000, staleMs: 60_000 }, clock);
    const gate = createGate({ billing, access, account: () => A });
    // An access cache of the app's own making (a test double) answers only yes or no.
    const double = { isActive: async () => true, hasEntitlement: async () => true } as unknown as AccessCache;
    const doubleGate = createGate({ billing, access: double, account: () => A });
    try {
      expect(await gate.check(asking(A), PRO)).toMatchObject({ allowed: true, source: 'live' });
      clock.advance(1_001);
      expect(await gate.check(asking(A), [PRO, EXPORT])).toMatchObject({ allowed: true, source: 'stale' });
      expect(await doubleGate.check(asking(A), PRO)).toEqual({
        allowed: true,
        account_ref_id: A,
        source: 'live',
      });
      await refreshed((options) =>
        access.isActive({ account_ref_id: A, subscription: 'pro-plan', tier: 'pro' }, options),
      );
    } finally {
      await access.close();
    }
  });

  it('a closed access cache is never read from memory: the gate fails typed', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    const gate = createGate({ billing, access, account: () => A });
    await gate.check(asking(A), PRO);
    await access.close();
    const error = await caught(() => gate.check(asking(A), PRO));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(String(error)).toMatch(/closed/);
  });
});

describe('gate.decisionOf', () => {
  it("gives protect's handler the decision of its own request, and nothing for any other", async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    const gate = createGate({ billing, access, account: (r) => r.headers.get('x-account') ?? undefined });
    const seen: unknown[] = [];
    const route = gate.protect(PRO, (request: Request) => {
      seen.push(gate.decisionOf(request));
      return Response.json({ ok: true });
    });
    try {
      for (let i = 0; i < 2; i++) expect((await route(asking(A))).status).toBe(200);
      expect((await route(asking(PAST_DUE))).status).toBe(402);
      expect(seen).toEqual([
        { allowed: true, account_ref_id: A, source: 'live' },
        { allowed: true, account_ref_id: A, source: 'cache' },
      ]);
      expect(gate.decisionOf(asking(A))).toBeUndefined();
    } finally {
      await access.close();
    }
  });
});

describe('the wrapped forms', () => {
  it('gate.hono(need, handler) and gate.express(need, handler) answer with the handler’s own answer; a "no" is the gate’s', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing, { ttlMs: 60_000 });
    const gate = createGate({ billing, access, account: (r) => r.headers.get('x-account') ?? undefined });
    const nodeGate = createGate<{ headers: Record<string, string> }>({
      billing,
      access,
      account: (req) => req.headers['x-account'],
    });
    try {
      const answer = new Response('ok');
      const seen: unknown[] = [];
      const context = () => ({
        req: { raw: asking(A) },
        res: answer,
        set: (_key: 'billing', value: unknown) => void seen.push(value),
      });
      const honoRoute = gate.hono(PRO, () => answer);
      // First from the service, then from memory: the handler's answer itself, the decision set before it ran.
      expect(await honoRoute(context())).toBe(answer);
      expect(await honoRoute(context())).toBe(answer);
      expect(seen).toEqual([
        { allowed: true, account_ref_id: A, source: 'live' },
        { allowed: true, account_ref_id: A, source: 'cache' },
      ]);

      const res = {
        statusCode: 200,
        locals: {} as Record<string, unknown>,
        writeHead: () => res,
        end: () => res,
        once: () => res,
      };
      const expressRoute = nodeGate.express(PRO, (_req, r: typeof res) => r.locals.billing);
      const next = (error?: unknown) => {
        throw new Error(`next(${String(error)}) was called`);
      };
      expect(await expressRoute({ headers: { 'x-account': A } }, res, next)).toEqual({
        allowed: true,
        account_ref_id: A,
        source: 'cache',
      });
      // A "no" is the gate's: the handler never runs, and the answer is written once the call settles.
      const denied = nodeGate.express(PRO, () => {
        throw new Error('the handler ran');
      });
      const written: number[] = [];
      const deniedRes = { ...res, writeHead: (status: number) => void written.push(status) };
      expect(await denied({ headers: { 'x-account': PAST_DUE } }, deniedRes, next)).toBeUndefined();
      expect(written).toEqual([402]);
    } finally {
      await access.close();
    }
  });
});
