import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAccessCache, createGate, InvalidRequestError } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { clientFor, until, useMockServer } from '../helpers.js';
import { A, AI, EMPTY, ENTERPRISE, gateOptions, PAST_DUE, setupFor } from './helpers.js';
import { openStream, STATE_FRAMEWORKS, sse, VIEW } from './state-helpers.js';

// gate.state over real HTTP under each framework, against the mock: the request's own account's
// state as JSON or as a stream, never a key, never another account, never a made-up state.
const mock = useMockServer();

describe.each(STATE_FRAMEWORKS)('gate.state through $name', (framework) => {
  it("answers the session's own account as JSON, private and never cached, holding no key", async () => {
    const s = await framework.serve(setupFor(mock.server), VIEW);
    try {
      const res = await fetch(`${s.url}/state?account_ref_id=${PAST_DUE}`, { headers: { 'x-account': A } });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({
        account_ref_id: A,
        active: true,
        tier: 'pro',
        features: { export: true, sso: false },
        credits: { [AI]: { credits: DEMO.initialCredits } },
      });
      expect(text).not.toContain(mock.server.apiKey);
      expect(text).not.toContain(mock.server.signingKey);
      const other = await (await fetch(`${s.url}/state`, { headers: { 'x-account': PAST_DUE } })).json();
      expect(other).toMatchObject({ account_ref_id: PAST_DUE, active: false, tier: null });
    } finally {
      await s.close();
    }
  });

  it('401 problem+json without a session, for JSON and streams alike', async () => {
    const s = await framework.serve(setupFor(mock.server), VIEW);
    try {
      for (const accept of ['application/json', 'text/event-stream']) {
        const res = await fetch(`${s.url}/state`, { headers: { accept } });
        expect(res.status).toBe(401);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await res.json()).toMatchObject({ reason: 'unauthenticated' });
      }
    } finally {
      await s.close();
    }
  });

  it('streams the state at once, then each change: an invalidation, a debit through the gate', async () => {
    const setup = setupFor(mock.server);
    const s = await framework.serve(setup, VIEW);
    try {
      const res = await openStream(s.url, A);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('cache-control')).toContain('no-store');
      const events = sse(res);
      expect((await events.next()).features.export).toBe(true);
      mock.server.store.setEntitlement(A, AI, 'export', false);
      await setup.access.invalidate(A);
      expect((await events.next()).features).toEqual({ export: false, sso: false });
      const spent = await fetch(`${s.url}/spend`, { method: 'POST', headers: { 'x-account': A } });
      expect(spent.status).toBe(200);
      expect((await events.next()).credits[AI]?.credits).toBe(DEMO.initialCredits - 5);
      expect(s.state.stats()).toEqual({ streams: 1, accounts: 1 });
      await events.cancel();
      await until(() => s.state.stats().streams === 0);
    } finally {
      await s.close();
    }
  });
});

describe('gate.state streams', () => {
  it('a burst of changes comes to the latest state; an unchanged state sends nothing', async () => {
    const setup = setupFor(mock.server);
    const s = await STATE_FRAMEWORKS[0]!.serve(setup, VIEW);
    try {
      const events = sse(await openStream(s.url, A));
      await events.next();
      await Promise.all([1, 2, 3, 4, 5].map(() => setup.access.invalidate(A)));
      mock.server.store.setEntitlement(A, AI, 'sso', true);
      await setup.access.invalidate(A);
      // The only event: the one with sso (the invalidations before it found the state unchanged).
      expect((await events.next()).features).toEqual({ export: true, sso: true });
    } finally {
      await s.close();
    }
  });

  it("the app's own billing.usage.debit on the gate's client pushes the new balance; the call's promise is unchanged", async () => {
    const setup = setupFor(mock.server);
    const s = await STATE_FRAMEWORKS[0]!.serve(setup, VIEW);
    // A second handler on the same client: its debits are still told once, not once per handler.
    const again = createGate(gateOptions<Request>(setup)).state(VIEW);
    try {
      const events = sse(await openStream(s.url, A));
      expect((await events.next()).credits[AI]?.credits).toBe(DEMO.initialCredits);
      const debit = { account_ref_id: A, product_code: AI, meter_code: 'credits', quantity: 7 };
      const { data, response } = await setup.billing.usage.debit(debit).withResponse();
      expect(data).toMatchObject({ approved: true, remaining_balance: DEMO.initialCredits - 7 });
      expect(response.status).toBe(200);
      expect((await events.next()).credits[AI]?.credits).toBe(DEMO.initialCredits - 7);
      // A refusal changes nothing and tells nothing; the next approved debit is the next event.
      const refused = await setup.billing.usage.debit({ ...debit, quantity: 10 ** 9 });
      expect(refused.approved).toBe(false);
      await setup.billing.usage.debit({ ...debit, quantity: 1 });
      expect((await events.next()).credits[AI]?.credits).toBe(DEMO.initialCredits - 8);
      // A failure reaches the caller as it was.
      await expect(setup.billing.usage.debit({ ...debit, quantity: -1 })).rejects.toBeInstanceOf(
        InvalidRequestError,
      );
    } finally {
      await again.close();
      await s.close();
    }
  });

  it('per account limit: the 3rd stream of one account is 429, another account still streams; total limit', async () => {
    const s = await STATE_FRAMEWORKS[0]!.serve(setupFor(mock.server), {
      ...VIEW,
      streams: { perAccount: 2, total: 3 },
    });
    try {
      const first = [await openStream(s.url, A), await openStream(s.url, A)];
      const third = await openStream(s.url, A);
      expect(third.status).toBe(429);
      expect(await third.json()).toMatchObject({ reason: 'too_many_streams' });
      // JSON reads are never limited.
      expect((await fetch(`${s.url}/state`, { headers: { 'x-account': A } })).status).toBe(200);
      const other = await openStream(s.url, PAST_DUE);
      expect(other.status).toBe(200);
      expect((await openStream(s.url, EMPTY)).status).toBe(429);
      for (const r of [...first, other]) await r.body?.cancel();
      await until(() => s.state.stats().streams === 0);
      expect((await openStream(s.url, A)).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('heartbeats keep an idle stream alive', async () => {
    const s = await STATE_FRAMEWORKS[0]!.serve(setupFor(mock.server), {
      ...VIEW,
      streams: { heartbeatMs: 20 },
    });
    try {
      const events = sse(await openStream(s.url, A));
      await events.next();
      const next = events.next();
      await until(() => events.comments() >= 2);
      await events.cancel();
      await next.catch(() => {});
    } finally {
      await s.close();
    }
  });

  it('an aborted request ends its stream; close() ends every stream and answers 503 after', async () => {
    const s = await STATE_FRAMEWORKS[1]!.serve(setupFor(mock.server), VIEW);
    try {
      const controller = new AbortController();
      const aborted = await openStream(s.url, A, controller.signal);
      await sse(aborted).next();
      const kept = sse(await openStream(s.url, A));
      await kept.next();
      controller.abort();
      await until(() => s.state.stats().streams === 1);
      await s.state.close();
      expect(await kept.ended()).toBe(true);
      expect(s.state.stats()).toEqual({ streams: 0, accounts: 0 });
      expect((await fetch(`${s.url}/state`, { headers: { 'x-account': A } })).status).toBe(503);
    } finally {
      await s.close();
    }
  });

  it('the service down with nothing cached: 503 with Retry-After, onError told, no state', async () => {
    const errors: unknown[] = [];
    const s = await STATE_FRAMEWORKS[0]!.serve(
      setupFor(mock.server, { onError: (e) => errors.push(e) }),
      VIEW,
    );
    try {
      mock.server.faults.add({ path: '/api/', status: 503, times: Number.POSITIVE_INFINITY });
      for (const accept of ['application/json', 'text/event-stream']) {
        const res = await fetch(`${s.url}/state`, { headers: { accept, 'x-account': A } });
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(await res.json()).toMatchObject({ reason: 'unavailable' });
      }
      expect(errors.length).toBe(2);
    } finally {
      mock.server.faults.clear();
      await s.close();
    }
  });

  it('a stream whose re-read fails ends (the client reads again), told to onError, never a made-up state', async () => {
    const errors: unknown[] = [];
    const setup = setupFor(mock.server, { onError: (e) => errors.push(e) });
    const s = await STATE_FRAMEWORKS[0]!.serve(setup, VIEW);
    try {
      const events = sse(await openStream(s.url, A));
      await events.next();
      mock.server.faults.add({ path: '/api/', status: 503, times: Number.POSITIVE_INFINITY });
      await setup.access.invalidate(A);
      expect(await events.ended()).toBe(true);
      expect(errors.length).toBe(1);
    } finally {
      mock.server.faults.clear();
      await s.close();
    }
  });

  it('an account the service does not know (signed up, never billed): inactive, no features, no credits, not a 500', async () => {
    const s = await STATE_FRAMEWORKS[0]!.serve(setupFor(mock.server), VIEW);
    try {
      const res = await fetch(`${s.url}/state`, { headers: { 'x-account': 'acct_signed_up_today' } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        account_ref_id: 'acct_signed_up_today',
        active: false,
        tier: null,
        features: { export: false, sso: false },
        credits: { [AI]: { credits: 0 } },
      });
      const events = sse(await openStream(s.url, 'acct_signed_up_today'));
      expect((await events.next()).credits[AI]?.credits).toBe(0);
      await events.cancel();
    } finally {
      await s.close();
    }
  });

  it("paywall_url: the signed link of the view's target, for the account", async () => {
    const s = await STATE_FRAMEWORKS[0]!.serve(setupFor(mock.server), { ...VIEW, paywall: ENTERPRISE });
    try {
      const res = await fetch(`${s.url}/state`, { headers: { 'x-account': A, 'x-email': 'a@example.com' } });
      const state = (await res.json()) as { paywall_url?: string };
      expect(state.paywall_url).toMatch(/^https?:\/\//);
      expect(state.paywall_url).not.toContain(mock.server.signingKey);
    } finally {
      await s.close();
    }
  });
});

describe('gate.state(view) checks the view at start-up', () => {
  const gate = () => {
    const billing = clientFor(mock.server);
    return createGate(
      gateOptions<Request>({ billing, access: createAccessCache(billing), signingKey: 'k', paywall: false }),
    );
  };

  it('names each bad field', () => {
    let caught: unknown;
    try {
      gate().state({
        features: {
          'bad name': { product_code: AI, entitlement_code: '' },
          ok: { product_code: AI } as never,
        },
        credits: [{ product_code: AI } as never],
        paywall: { product_name: 'x' },
        streams: { perAccount: 0 },
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidRequestError);
    const fields = (caught as InvalidRequestError).issues.map((i) => i.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'view.features.bad name',
        'view.features.bad name.entitlement_code',
        'view.features.ok.entitlement_code',
        'view.credits[0].meter_code',
        'view.paywall',
        'view.streams.perAccount',
      ]),
    );
  });

  it('property: any view is either accepted or refused with an InvalidRequestError, never another throw', () => {
    const g = gate();
    const code = fc.oneof(fc.string(), fc.constant(undefined), fc.integer());
    fc.assert(
      fc.property(
        fc.record(
          {
            features: fc.dictionary(fc.string(), fc.record({ product_code: code, entitlement_code: code })),
            credits: fc.array(fc.record({ product_code: code, meter_code: code })),
            streams: fc.record(
              { perAccount: fc.integer(), total: fc.integer(), heartbeatMs: fc.integer() },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
        (view) => {
          try {
            const handler = g.state(view as never);
            void handler.close();
          } catch (error) {
            expect(error).toBeInstanceOf(InvalidRequestError);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
