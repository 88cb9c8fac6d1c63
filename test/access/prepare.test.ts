import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AccessCache,
  type AccessLookupOutcome,
  createAccessCache,
  InvalidRequestError,
} from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';
import { cacheWithClock, manualClock } from './helpers.js';

// Issue 41 §3: the prepared form of the access cache's three lookups. Everything but the account is
// checked once, when prepared; each call answers exactly what the unprepared lookup answers.

const mock = useMockServer();

/** What a lookup settled with: its value or its error (name, message, issues), and its outcome. */
async function settled(call: () => Promise<unknown>, outcome: AccessLookupOutcome) {
  try {
    return { value: await call(), source: outcome.source };
  } catch (error) {
    const e = error as InvalidRequestError;
    return {
      error: {
        name: e.name,
        message: e.message,
        issues: e.issues,
        status: (e as { status?: number }).status,
      },
    };
  }
}

const accounts = fc.constantFrom(
  'acct_active',
  'acct_past_due',
  'acct_multi',
  'acct_nobody',
  '',
  '..',
  '\ud800',
  'a/b',
  42 as unknown as string,
  undefined as unknown as string,
);

describe('access.prepare', () => {
  it('property: prepared and unprepared agree, call after call, on any account', async () => {
    const filters = fc.record(
      { subscription: fc.constantFrom('pro-plan', 'team-plan'), tier: fc.constantFrom('pro', 'basic') },
      { requiredKeys: [] },
    );
    const entitlement = fc.record({
      product_code: fc.constantFrom('ai-assistant', 'nothing'),
      entitlement_code: fc.constantFrom('export', 'teleport'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.tuple(
            fc.constant('isActive' as const),
            filters.filter((f) => !(f.tier && !f.subscription)),
          ),
          fc.tuple(
            fc.constant('status' as const),
            filters.filter((f) => !(f.tier && !f.subscription)),
          ),
          fc.tuple(fc.constant('hasEntitlement' as const), entitlement),
        ),
        fc.array(fc.tuple(accounts, fc.boolean()), { minLength: 1, maxLength: 6 }),
        async ([lookup, params], calls) => {
          const clock = manualClock();
          const plain: AccessCache = cacheWithClock(
            clientFor(mock.server),
            { ttlMs: 1_000, staleMs: 5_000 },
            clock,
          );
          const other: AccessCache = cacheWithClock(
            clientFor(mock.server),
            { ttlMs: 1_000, staleMs: 5_000 },
            clock,
          );
          const prepared = other.prepare(lookup, params as never);
          for (const [account, advance] of calls) {
            if (advance) clock.advance(1_500);
            const o1: AccessLookupOutcome = {};
            const o2: AccessLookupOutcome = {};
            const unprepared = await settled(
              () =>
                (plain[lookup] as (p: object, o: object) => Promise<unknown>)(
                  { ...params, account_ref_id: account },
                  { outcome: o1 },
                ),
              o1,
            );
            const viaPrepared = await settled(() => prepared(account, { outcome: o2 }), o2);
            expect(viaPrepared).toEqual(unprepared);
          }
          await plain.close();
          await other.close();
        },
      ),
      { numRuns: 25 },
    );
  });

  it('shares answers with the unprepared lookups (one key, one request)', async () => {
    const access = createAccessCache(clientFor(mock.server));
    const isActive = access.prepare('isActive', {});
    mock.server.requests.clear();
    expect(await access.isActive({ account_ref_id: 'acct_active' })).toBe(true);
    const outcome: AccessLookupOutcome = {};
    expect(await isActive('acct_active', { outcome })).toBe(true);
    expect(outcome.source).toBe('cache');
    expect(mock.server.requests.count()).toBe(1);
    await access.invalidate('acct_active');
    expect(await isActive('acct_active', { outcome })).toBe(true);
    expect(outcome.source).toBe('live');
  });

  it('checks the lookup, its parameters and options once, when prepared, as the lookup does', async () => {
    const access = createAccessCache(clientFor(mock.server));
    const refusals: [() => unknown, string, string][] = [
      [() => access.prepare('nope' as never, {} as never), 'access.prepare', 'lookup'],
      [() => access.prepare('toString' as never, {} as never), 'access.prepare', 'lookup'],
      [() => access.prepare('isActive', { tier: 'pro' }), 'access.isActive', 'tier'],
      [() => access.prepare('status', { subscription: '' }), 'access.status', 'subscription'],
      [
        () => access.prepare('hasEntitlement', { product_code: 'p' } as never),
        'access.hasEntitlement',
        'entitlement_code',
      ],
      [
        () => access.prepare('isActive', { account_ref_id: 'a' } as never),
        'access.isActive',
        'account_ref_id',
      ],
      [() => access.prepare('isActive', {}, { outcome: 'x' as never }), 'access.isActive', 'options.outcome'],
      [() => access.prepare('isActive', 'x' as never), 'access.isActive', 'params'],
    ];
    for (const [make, operation, field] of refusals) {
      const error = (await caught(make)) as InvalidRequestError;
      expect(error, field).toBeInstanceOf(InvalidRequestError);
      expect(error.operation).toBe(operation);
      expect(error.issues.map((i) => i.field)).toContain(field);
    }
    // A bad per-call option rejects (never throws), naming it.
    const isActive = access.prepare('isActive', {});
    const bad = (await isActive('acct_active', { outcome: 1 as never }).catch(
      (e: unknown) => e,
    )) as InvalidRequestError;
    expect(bad.issues[0]?.field).toBe('options.outcome');
    await access.close();
    expect(await caught(() => isActive('acct_active'))).toBeInstanceOf(InvalidRequestError);
  });

  it("the prepared options apply to every call; a call's own replace them", async () => {
    const access = createAccessCache(clientFor(mock.server));
    const fixed: AccessLookupOutcome = {};
    const canExport = access.prepare(
      'hasEntitlement',
      { product_code: 'ai-assistant', entitlement_code: 'export' },
      { outcome: fixed },
    );
    expect(await canExport('acct_active')).toBe(true);
    expect(fixed.source).toBe('live');
    const own: AccessLookupOutcome = {};
    expect(await canExport('acct_active', { outcome: own })).toBe(true);
    expect(own.source).toBe('cache');
    const aborted = new AbortController();
    aborted.abort();
    expect((await caught(() => canExport('acct_active', { signal: aborted.signal }))).name).toBe(
      'APIUserAbortError',
    );
  });
});
