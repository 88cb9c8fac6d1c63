import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createAccessCache, createGate, type GateNeeds } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { clientFor, useMockServer } from '../helpers.js';

// gate.check prepares a need object once (src/gate/check-needs-cache.ts): the same object is not
// checked and prepared again, and one changed in place is never answered by its old preparation.
const mock = useMockServer();
const request = () => new Request('http://app.test/');

describe('gate.check: a need prepared once per need object', () => {
  it('the same need object is prepared once; a new object with the same content is prepared again', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    try {
      const prepare = vi.spyOn(access, 'prepare');
      const gate = createGate({ billing, access, account: () => DEMO.accounts.active });
      const need = { subscription: 'pro-plan', tier: 'pro' };
      for (let i = 0; i < 5; i++) expect(await gate.check(request(), need)).toMatchObject({ allowed: true });
      expect(prepare).toHaveBeenCalledTimes(1);
      await gate.check(request(), { ...need });
      expect(prepare).toHaveBeenCalledTimes(2);
    } finally {
      await access.close();
    }
  });

  it('a need changed in place is checked again: a tier the account lacks refuses, a bad one throws', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    try {
      const gate = createGate({ billing, access, account: () => DEMO.accounts.active });
      const need: { subscription: string; tier?: string } = { subscription: 'pro-plan', tier: 'pro' };
      expect(await gate.check(request(), need)).toMatchObject({ allowed: true });
      need.tier = 'enterprise';
      expect(await gate.check(request(), need)).toMatchObject({ allowed: false });
      need.tier = 'pro';
      expect(await gate.check(request(), need)).toMatchObject({ allowed: true });
      const list: { subscription: string; tier?: string }[] = [{ subscription: 'pro-plan' }];
      expect(await gate.check(request(), list)).toMatchObject({ allowed: true });
      list.push({ subscription: 'team-plan' });
      expect(await gate.check(request(), list)).toMatchObject({ allowed: false });
      (list[1] as { subscription: unknown }).subscription = 42;
      await expect(gate.check(request(), list)).rejects.toThrow(/subscription/);
    } finally {
      await access.close();
    }
  });

  it('property: after any changes in place, the cached check answers as a fresh object does', async () => {
    const billing = clientFor(mock.server);
    const access = createAccessCache(billing);
    try {
      const gate = createGate({ billing, access, account: () => DEMO.accounts.active });
      const subscriptions = ['pro-plan', 'team-plan'];
      const tiers = [undefined, 'pro', 'starter', 'enterprise'];
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.nat(1), fc.nat(3), fc.boolean()), { minLength: 1, maxLength: 8 }),
          async (changes) => {
            const need: { subscription: string; tier?: string } = { subscription: 'pro-plan' };
            const list: { subscription: string; tier?: string }[] = [{ subscription: 'pro-plan' }];
            for (const [s, t, inList] of changes) {
              const target = inList ? (list[list.length - 1] as typeof need) : need;
              target.subscription = subscriptions[s] as string;
              const tier = tiers[t];
              if (tier === undefined) delete target.tier;
              else target.tier = tier;
              if (inList && t === 0) list.push({ subscription: 'pro-plan' });
              for (const given of [need, list] as GateNeeds<Request>[]) {
                const cached = await gate.check(request(), given);
                const fresh = await gate.check(request(), structuredClone(given));
                expect(cached.allowed).toBe(fresh.allowed);
              }
            }
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      await access.close();
    }
  });
});
