import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccessCache, createGate, InvalidRequestError } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { clientFor, until, useMockServer } from '../helpers.js';

const mock = useMockServer();
const A = DEMO.accounts.active;
const AI = DEMO.products.aiAssistant.product_code;

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

function fakeRes() {
  const res = {
    statusCode: 200,
    locals: undefined as Record<string, unknown> | undefined,
    written: undefined as number | undefined,
    body: '',
    writeHead(status: number) {
      res.written = status;
    },
    end(body?: string) {
      res.body = body ?? '';
    },
    once() {},
  };
  return res;
}
const req = (account?: string) => ({
  method: 'GET',
  url: '/',
  headers: account ? { 'x-account': account } : {},
});

function setup(account: (r: { headers: Record<string, string> }) => unknown) {
  const billing = clientFor(mock.server, { maxRetries: 0 });
  const access = createAccessCache(billing);
  const gate = createGate({ billing, access, account: account as never });
  return { gate, access };
}

describe('gate.express: its next step handed to the decision', () => {
  for (const [name, need] of [
    ['one lookup', { subscription: 'pro-plan' }],
    [
      'two lookups',
      [
        { subscription: 'pro-plan' },
        { entitlement: { product_code: AI, entitlement_code: DEMO.entitlements.export } },
      ],
    ],
    ['credits', { credits: { product_code: AI, meter_code: DEMO.meters.credits, quantity: 1 } }],
  ] as const) {
    it(`${name}: a handler that throws (sync or async) reaches next(err), nothing unhandled`, async () => {
      const { gate, access } = setup((r) => r.headers['x-account']);
      for (const kind of ['sync', 'async']) {
        const boom = new Error(kind);
        const nexts: unknown[] = [];
        const h = gate.express(
          need as never,
          (() => {
            if (kind === 'sync') throw boom;
            return Promise.reject(boom);
          }) as never,
        );
        await (h as (...a: unknown[]) => unknown)(req(A), fakeRes(), (e: unknown) => nexts.push(e));
        expect(nexts).toEqual([boom]);
      }
      // middleware form: next() itself throwing (a sync throw below it) reaches next(err) once more, as before
      const nexts: unknown[] = [];
      const mw = gate.express(need as never);
      mw(req(A) as never, fakeRes(), (e?: unknown) => {
        nexts.push(e);
        if (e === undefined) throw new Error('below');
      });
      await until(() => nexts.length === 2);
      expect(nexts[0]).toBeUndefined();
      expect((nexts[1] as Error).message).toBe('below');
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      await access.close();
    });
  }

  it('account throwing sync, rejecting, or bad: next(err), handler never runs; none: 401', async () => {
    for (const account of [
      () => {
        throw new Error('sync');
      },
      () => Promise.reject(new Error('async')),
      () => '..',
      // biome-ignore lint/suspicious/noThenProperty: an app's account given as a thenable of its own.
      () => ({ then: (ok: (v: unknown) => void) => ok(A) }),
    ]) {
      const { gate, access } = setup(account);
      const nexts: unknown[] = [];
      let ran = 0;
      const res = fakeRes();
      const mw = gate.express({ subscription: 'pro-plan' });
      mw(req(A) as never, res, (e?: unknown) => {
        nexts.push(e);
        ran++;
      });
      await until(() => nexts.length === 1);
      await access.close();
      if (account.toString().includes('then')) expect(nexts).toEqual([undefined]);
      else expect(nexts[0]).toBeInstanceOf(Error);
      expect(ran).toBe(1);
    }
    const { gate, access } = setup(() => undefined);
    const res = fakeRes();
    const nexts: unknown[] = [];
    gate.express({ subscription: 'pro-plan' })(req() as never, res, (e?: unknown) => nexts.push(e));
    await until(() => res.written !== undefined);
    expect(res.written).toBe(401);
    expect(nexts).toEqual([]);
    await access.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(unhandled).toEqual([]);
  });

  it('deny path writes 402 and never calls next; gate.check unaffected', async () => {
    const { gate, access } = setup((r) =>
      typeof (r.headers as unknown as Headers).get === 'function'
        ? ((r.headers as unknown as Headers).get('x-account') ?? undefined)
        : r.headers['x-account'],
    );
    const res = fakeRes();
    const nexts: unknown[] = [];
    gate.express({ subscription: 'pro-plan' })(req(DEMO.accounts.pastDue) as never, res, (e?: unknown) =>
      nexts.push(e),
    );
    await until(() => res.written !== undefined);
    expect(res.written).toBe(402);
    expect(nexts).toEqual([]);
    const d = await gate.check(new Request('http://x/', { headers: { 'x-account': A } }), {
      subscription: 'pro-plan',
    });
    expect(d).toMatchObject({ allowed: true });
    const bad = await gate
      .check(new Request('http://x/', { headers: { 'x-account': '..' } }), { subscription: 'pro-plan' })
      .catch((e) => e);
    expect(bad).toBeInstanceOf(InvalidRequestError);
    await access.close();
  });
});

describe('an access cache of another making', () => {
  it('a "yes" whose outcome.source is outside the three the gate knows is still a "yes"', async () => {
    const billing = clientFor(mock.server, { maxRetries: 0 });
    const access = {
      isActive: async (_p: unknown, o?: { outcome?: { source?: string } }) => {
        if (o?.outcome) o.outcome.source = 'memory';
        return true;
      },
      hasEntitlement: async () => true,
      status: async () => ({}),
      invalidate: async () => {},
      stats: () => ({}),
      close: async () => {},
    };
    const gate = createGate({ billing, access: access as never, account: () => A });
    const d = await gate.check(new Request('http://x/'), { subscription: 'pro-plan' });
    expect(d.allowed).toBe(true);
  });
});
