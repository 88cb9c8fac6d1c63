import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveAccessOptions } from '../../src/access/options.js';
import {
  type AccessLookupOutcome,
  type AccessStore,
  APIConnectionError,
  APIUserAbortError,
  createAccessCache,
  InternalServerError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
} from '../../src/index.js';
import { startMockServer } from '../../src/testing/index.js';
import { caught, clientFor, until, useMockServer } from '../helpers.js';
import { answeringStore, cacheWithClock, manualClock, refreshed } from './helpers.js';

const mock = useMockServer();
const statusRequests = (account = 'acct_active') =>
  mock.server.requests.count({ method: 'GET', path: `/api/account/${account}/status/` });
const active = { account_ref_id: 'acct_active' };

describe('createAccessCache: options and parameters', () => {
  it('refuses each bad option with InvalidRequestError naming it, before anything is sent', async () => {
    const billing = clientFor(mock.server);
    const bad: [string, unknown][] = [
      ['ttlMs', 0],
      ['ttlMs', Number.POSITIVE_INFINITY],
      ['denyTtlMs', -1],
      ['staleMs', 1.5],
      ['maxEntries', 0],
      ['store', { read: () => {} }],
      ['onError', 'log'],
      ['unknown', 1],
    ];
    for (const [name, value] of bad) {
      const error = await caught(() => createAccessCache(billing, { [name]: value }));
      expect(error, name).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).issues[0]?.field).toBe(`options.${name}`);
    }
    const stale = await caught(() => createAccessCache(billing, { ttlMs: 60_000, staleMs: 10_000 }));
    expect((stale as InvalidRequestError).issues[0]?.field).toBe('options.staleMs');
    expect(await caught(() => createAccessCache(billing, null as never))).toBeInstanceOf(InvalidRequestError);
    expect(await caught(() => createAccessCache({} as never))).toBeInstanceOf(InvalidRequestError);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('defaults fit the options given: a short ttl or staleMs pulls the longer defaults down instead of throwing', async () => {
    const billing = clientFor(mock.server);
    // The 5 s "no" default exceeded a given staleMs of 600 and threw before: it yields now.
    expect(resolveAccessOptions({ ttlMs: 200, staleMs: 600 })).toMatchObject({
      ttlMs: 200,
      denyTtlMs: 200,
      staleMs: 600,
    });
    expect(resolveAccessOptions({ staleMs: 1_000 })).toMatchObject({
      ttlMs: 1_000,
      denyTtlMs: 1_000,
      staleMs: 1_000,
    });
    expect(resolveAccessOptions({ ttlMs: 2_000 })).toMatchObject({
      ttlMs: 2_000,
      denyTtlMs: 2_000,
      staleMs: 300_000,
    });
    expect(resolveAccessOptions({})).toMatchObject({ ttlMs: 30_000, denyTtlMs: 5_000, staleMs: 300_000 });
    const access = createAccessCache(billing, { ttlMs: 200, staleMs: 600 });
    expect(await access.isActive(active)).toBe(true);
    await access.close();
    // What the user set and contradicts itself still throws, naming the options.
    const both = await caught(() => createAccessCache(billing, { denyTtlMs: 900, staleMs: 600 }));
    expect(both).toBeInstanceOf(InvalidRequestError);
    expect((both as InvalidRequestError).issues[0]).toMatchObject({ field: 'options.staleMs' });
    expect((both as InvalidRequestError).issues[0]?.message).toContain('denyTtlMs');
    expect((both as InvalidRequestError).issues[0]?.message).not.toContain('ttlMs and');
  });

  it('property: options that agree with each other never throw, and the resolved ones keep deny <= stale, ttl <= stale', () => {
    const ms = fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined });
    fc.assert(
      fc.property(ms, ms, ms, (ttlMs, denyTtlMs, staleMs) => {
        const given = { ttlMs, denyTtlMs, staleMs };
        const agree = staleMs === undefined || Math.max(ttlMs ?? 0, denyTtlMs ?? 0) <= staleMs;
        let resolved: ReturnType<typeof resolveAccessOptions>;
        try {
          resolved = resolveAccessOptions(given);
        } catch (error) {
          expect(agree).toBe(false);
          expect(error).toBeInstanceOf(InvalidRequestError);
          return;
        }
        expect(agree).toBe(true);
        for (const name of ['ttlMs', 'denyTtlMs', 'staleMs'] as const) {
          if (given[name] !== undefined) expect(resolved[name]).toBe(given[name]);
        }
        expect(resolved.denyTtlMs).toBeLessThanOrEqual(resolved.staleMs);
        expect(resolved.ttlMs).toBeLessThanOrEqual(resolved.staleMs);
        if (denyTtlMs === undefined) expect(resolved.denyTtlMs).toBeLessThanOrEqual(resolved.ttlMs);
      }),
    );
  });

  it('property: any non-object or mistyped options throw InvalidRequestError, never anything else', () => {
    const billing = clientFor(mock.server);
    const value = fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.nat()));
    fc.assert(
      fc.property(
        fc.oneof(
          value,
          fc.record(
            { ttlMs: value, denyTtlMs: value, staleMs: value, maxEntries: value, onError: value },
            { requiredKeys: [] },
          ),
        ),
        (options) => {
          try {
            createAccessCache(billing, options as never);
          } catch (error) {
            return error instanceof InvalidRequestError;
          }
          // Only valid options get here: numbers the rules accept.
          return typeof options === 'object' && options !== null && !Array.isArray(options);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('checks lookup parameters as the client does: typed error, nothing sent, nothing cached', async () => {
    const access = createAccessCache(clientFor(mock.server));
    const cases = [
      () => access.isActive({} as never),
      () => access.isActive({ account_ref_id: '..' }),
      () => access.status({ account_ref_id: 'acct_active', tier: 'pro' }),
      () => access.hasEntitlement({ account_ref_id: 'acct_active', product_code: 'ai-assistant' } as never),
      () => access.isActive(active, { signal: 'stop' as never }),
      () => access.invalidate('' as string),
    ];
    for (const call of cases) expect(await caught(call)).toBeInstanceOf(InvalidRequestError);
    expect(mock.server.requests.count()).toBe(0);
    expect(access.stats().entries).toBe(0);
  });
});

describe('createAccessCache: answers from memory', () => {
  it('serves an answer younger than its ttl without a request; isActive and status share it', async () => {
    const clock = manualClock();
    const access = cacheWithClock(clientFor(mock.server), { ttlMs: 30_000 }, clock);
    expect(await access.isActive(active)).toBe(true);
    clock.advance(29_999);
    expect(await access.isActive(active)).toBe(true);
    expect((await access.status(active)).account_ref_id).toBe('acct_active');
    expect(statusRequests()).toBe(1);
    expect(access.stats()).toMatchObject({ hits: 2, misses: 1, refreshes: 1, entries: 1 });
  });

  it('keeps "false" and the documented not-found answer for denyTtlMs only', async () => {
    const clock = manualClock();
    const access = cacheWithClock(
      clientFor(mock.server),
      { ttlMs: 30_000, denyTtlMs: 5_000, staleMs: 30_000 },
      clock,
    );
    expect(await access.isActive({ account_ref_id: 'acct_past_due' })).toBe(false);
    expect(await access.isActive({ account_ref_id: 'acct_nobody' })).toBe(false);
    // status() throws the kept not-found as the same NotFoundError, without asking again.
    const notFound = await caught(() => access.status({ account_ref_id: 'acct_nobody' }));
    expect(notFound).toBeInstanceOf(NotFoundError);
    expect(statusRequests('acct_past_due') + statusRequests('acct_nobody')).toBe(2);
    clock.advance(5_001);
    // Past denyTtlMs (within staleMs) a "no" is never served again: the customer who just paid gets
    // the fresh answer on the first lookup, the one that waits for it.
    mock.server.store.setSubscriptionActive(pastDueSubscription(), true);
    const outcome: AccessLookupOutcome = {};
    expect(await access.isActive({ account_ref_id: 'acct_past_due' }, { outcome })).toBe(true);
    expect(outcome.source).toBe('live');
    expect(await access.isActive({ account_ref_id: 'acct_past_due' })).toBe(true);
    expect(statusRequests('acct_past_due')).toBe(2);
    // The not-found "no" too.
    expect(await access.isActive({ account_ref_id: 'acct_nobody' }, { outcome })).toBe(false);
    expect(outcome.source).toBe('live');
    expect(statusRequests('acct_nobody')).toBe(2);
  });

  it('a "no" past denyTtlMs stands in only when the service fails (stale, onError told)', async () => {
    const clock = manualClock();
    const errors: unknown[] = [];
    const access = cacheWithClock(
      clientFor(mock.server, { maxRetries: 0 }),
      { ttlMs: 30_000, denyTtlMs: 5_000, staleMs: 30_000, onError: (e) => errors.push(e) },
      clock,
    );
    const pastDue = { account_ref_id: 'acct_past_due' };
    expect(await access.isActive(pastDue)).toBe(false);
    clock.advance(5_001);
    mock.server.faults.add({ path: '/api/account/', status: 503, times: 1 });
    const outcome: AccessLookupOutcome = {};
    expect(await access.isActive(pastDue, { outcome })).toBe(false);
    expect(outcome.source).toBe('stale');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(InternalServerError);
    // Past staleMs it is never served: the failure is the lookup's.
    clock.advance(30_000);
    mock.server.faults.add({ path: '/api/account/', status: 503, times: 1 });
    expect(await caught(() => access.isActive(pastDue))).toBeInstanceOf(InternalServerError);
  });

  it('hasEntitlement answers has_access, "no" for an unknown account, and caches both', async () => {
    const access = createAccessCache(clientFor(mock.server));
    const params = {
      account_ref_id: 'acct_active',
      product_code: 'ai-assistant',
      entitlement_code: 'export',
    };
    expect(await access.hasEntitlement(params)).toBe(true);
    expect(await access.hasEntitlement(params)).toBe(true);
    expect(await access.hasEntitlement({ ...params, entitlement_code: 'teleport' })).toBe(false);
    expect(mock.server.requests.count({ path: '/api/entitlements/check/' })).toBe(2);
  });

  it('past the ttl, within staleMs: the old answer at once, and ONE background refresh for 200 lookups', async () => {
    const clock = manualClock();
    const access = cacheWithClock(clientFor(mock.server), { ttlMs: 1_000, staleMs: 60_000 }, clock);
    await access.isActive(active);
    clock.advance(1_001);
    mock.server.faults.add({ path: '/api/account/', delayMs: 100 });
    const before = Date.now();
    const answers = await Promise.all(Array.from({ length: 200 }, () => access.isActive(active)));
    // Served from memory while the refresh waits 100 ms at the server.
    expect(Date.now() - before).toBeLessThan(90);
    expect(answers.every((a) => a === true)).toBe(true);
    expect(access.stats()).toMatchObject({ stale: 200, refreshes: 2 });
    // Once the refresh landed, any second one would have started: there is none.
    await refreshed((options) => access.isActive(active, options));
    expect(statusRequests()).toBe(2);
    expect(access.stats().refreshes).toBe(2);
  });

  it("fills options.outcome with where each answer came from: 'live', 'cache', 'stale'; a rejected lookup leaves it", async () => {
    const clock = manualClock();
    const access = cacheWithClock(clientFor(mock.server), { ttlMs: 1_000, staleMs: 60_000 }, clock);
    const sources: unknown[] = [];
    for (const advance of [0, 999, 2]) {
      clock.advance(advance);
      const outcome = {};
      expect(await access.isActive(active, { outcome })).toBe(true);
      sources.push(outcome);
    }
    expect(sources).toEqual([{ source: 'live' }, { source: 'cache' }, { source: 'stale' }]);
    const ent = { account_ref_id: 'acct_active', product_code: 'ai-assistant', entitlement_code: 'export' };
    const outcome = { source: 'cache' as const };
    expect(await access.hasEntitlement(ent, { outcome })).toBe(true);
    expect(outcome).toEqual({ source: 'live' });
    const untouched = {};
    expect(
      await caught(() => access.status({ account_ref_id: '..' }, { outcome: untouched })),
    ).toBeInstanceOf(InvalidRequestError);
    expect(untouched).toEqual({});
    const bad = await caught(() => access.isActive(active, { outcome: 'source' as never }));
    expect((bad as InvalidRequestError).issues[0]?.field).toBe('options.outcome');
    // The stale answer's refresh lands: the next lookup is from memory again.
    await until(() => statusRequests() === 2);
    await access.close();
  });

  it('past staleMs an answer is never served: the lookup waits for the service', async () => {
    const clock = manualClock();
    const access = cacheWithClock(
      clientFor(mock.server),
      { ttlMs: 1_000, denyTtlMs: 1_000, staleMs: 2_000 },
      clock,
    );
    await access.isActive(active);
    mock.server.store.setSubscriptionActive(activeSubscription(), false);
    clock.advance(2_000);
    expect(await access.isActive(active)).toBe(false);
    expect(access.stats()).toMatchObject({ stale: 0, misses: 2 });
  });
});

describe('createAccessCache: when the service fails', () => {
  const failures: [string, (server: typeof mock.server) => void, new (...a: never[]) => Error][] = [
    ['a 5xx', (s) => s.faults.add({ path: '/api/account/', status: 503, times: 10 }), InternalServerError],
    [
      'a 429 cooldown',
      (s) => s.faults.add({ path: '/api/account/', status: 429, headers: { 'retry-after': '600' } }),
      RateLimitError,
    ],
  ];
  for (const [name, inject, type] of failures) {
    it(`${name}: stale answer served and onError told; with nothing usable, the typed error; never cached`, async () => {
      const clock = manualClock();
      const errors: unknown[] = [];
      const billing = clientFor(mock.server, { maxRetries: 0, maxRetryDelay: 1_000 });
      const access = cacheWithClock(
        billing,
        { ttlMs: 1_000, staleMs: 10_000, onError: (e) => errors.push(e) },
        clock,
      );
      await access.isActive(active);
      clock.advance(1_500);
      inject(mock.server);
      expect(await access.isActive(active)).toBe(true);
      await until(() => errors.length > 0);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(type);
      // Nothing usable: a cold key rejects with the call's own typed error, and it is not kept.
      const cold = { account_ref_id: 'acct_multi' };
      expect(await caught(() => access.isActive(cold))).toBeInstanceOf(type);
      mock.server.faults.clear();
      // A 429's cooldown holds the client for its Retry-After: the cache does not hide it.
      if (type !== RateLimitError) expect(await access.isActive(cold)).toBe(true);
    });
  }

  it('a timeout: the stale answer is served; a cold key rejects with APITimeoutError', async () => {
    const clock = manualClock();
    const errors: unknown[] = [];
    const billing = clientFor(mock.server, { maxRetries: 0, timeout: 100 });
    const access = cacheWithClock(billing, { ttlMs: 1_000, onError: (e) => errors.push(e) }, clock);
    await access.isActive(active);
    clock.advance(1_001);
    mock.server.faults.add({ path: '/api/account/', delayMs: 1_000, times: 2 });
    expect(await access.isActive(active)).toBe(true);
    const cold = await caught(() => access.isActive({ account_ref_id: 'acct_multi' }));
    expect(cold.name).toBe('APITimeoutError');
    await until(() => errors.length > 0);
    expect(errors.map((e) => (e as Error).name)).toEqual(['APITimeoutError']);
  });

  it('connection refused: the stale answer is served; a cold key rejects with APIConnectionError', async () => {
    const server = await startMockServer();
    const clock = manualClock();
    const errors: unknown[] = [];
    const access = cacheWithClock(
      clientFor(server, { maxRetries: 0 }),
      { ttlMs: 1_000, onError: (e) => errors.push(e) },
      clock,
    );
    await access.isActive(active);
    await server.close();
    clock.advance(1_001);
    expect(await access.isActive(active)).toBe(true);
    expect(await caught(() => access.isActive({ account_ref_id: 'acct_multi' }))).toBeInstanceOf(
      APIConnectionError,
    );
    await until(() => errors.length > 0);
    expect(errors[0]).toBeInstanceOf(APIConnectionError);
  });
});

describe('createAccessCache: one request per key', () => {
  it('concurrent lookups of a cold key share one request', async () => {
    const access = createAccessCache(clientFor(mock.server));
    const answers = await Promise.all(Array.from({ length: 250 }, () => access.isActive(active)));
    expect(new Set(answers)).toEqual(new Set([true]));
    expect(statusRequests()).toBe(1);
    expect(access.stats()).toMatchObject({ misses: 250, refreshes: 1 });
  });

  it("one caller's abort rejects that caller only; the shared request answers the others", async () => {
    const access = createAccessCache(clientFor(mock.server));
    mock.server.faults.add({ path: '/api/account/', delayMs: 150 });
    const controller = new AbortController();
    const aborted = access.isActive(active, { signal: controller.signal });
    const others = Promise.all([access.isActive(active), access.status(active)]);
    // Aborted while the shared request is at the server.
    await until(() => mock.server.activeRequests() === 1);
    controller.abort();
    expect(await caught(() => aborted)).toBeInstanceOf(APIUserAbortError);
    const [isActive, status] = await others;
    expect(isActive).toBe(true);
    expect(status.account_ref_id).toBe('acct_active');
    expect(statusRequests()).toBe(1);
    // The answer was kept: the abort did not cancel the request.
    await access.isActive(active);
    expect(statusRequests()).toBe(1);
  });

  it('an already aborted signal rejects at once, nothing sent', async () => {
    const access = createAccessCache(clientFor(mock.server));
    const error = await caught(() => access.isActive(active, { signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    // A later lookup's request is the first the server saw: the aborted one sent nothing before it.
    expect(await access.isActive({ account_ref_id: 'acct_multi' })).toBe(true);
    expect(mock.server.requests.count()).toBe(1);
    expect(statusRequests()).toBe(0);
  });
});

describe('createAccessCache: invalidate', () => {
  it('after invalidate resolves, the next lookup asks the service', async () => {
    const access = createAccessCache(clientFor(mock.server));
    await access.isActive(active);
    mock.server.store.setSubscriptionActive(activeSubscription(), false);
    await access.invalidate('acct_active');
    expect(await access.isActive(active)).toBe(false);
    expect(statusRequests()).toBe(2);
    expect(access.stats().invalidations).toBe(1);
  });

  it('a request that started before invalidate never stores its answer after it', async () => {
    const access = createAccessCache(clientFor(mock.server));
    mock.server.faults.add({ path: '/api/account/', delayMs: 150 });
    const early = access.isActive(active);
    await until(() => mock.server.activeRequests() === 1);
    await access.invalidate('acct_active');
    // The early request answers (true) after the invalidation; then the account changes with no
    // webhook. Had the early answer been stored, the next lookup would still say true.
    expect(await early).toBe(true);
    mock.server.store.setSubscriptionActive(activeSubscription(), false);
    expect(await access.isActive(active)).toBe(false);
    expect(await access.isActive(active)).toBe(false);
    expect(statusRequests()).toBe(2);
  });

  it("drops every answer of the account and no other account's", async () => {
    const access = createAccessCache(clientFor(mock.server));
    const ent = { account_ref_id: 'acct_active', product_code: 'ai-assistant', entitlement_code: 'export' };
    await Promise.all([
      access.isActive(active),
      access.isActive({ account_ref_id: 'acct_active', subscription: 'pro-plan' }),
      access.hasEntitlement(ent),
      access.isActive({ account_ref_id: 'acct_multi' }),
    ]);
    expect(mock.server.requests.count()).toBe(4);
    await access.invalidate('acct_active');
    await Promise.all([
      access.isActive(active),
      access.isActive({ account_ref_id: 'acct_active', subscription: 'pro-plan' }),
      access.hasEntitlement(ent),
      access.isActive({ account_ref_id: 'acct_multi' }),
    ]);
    expect(mock.server.requests.count()).toBe(7);
  });

  it('close(): later lookups reject typed, invalidate still resolves', async () => {
    const access = createAccessCache(clientFor(mock.server));
    await access.isActive(active);
    await access.close();
    expect(await caught(() => access.isActive(active))).toBeInstanceOf(InvalidRequestError);
    await access.invalidate('acct_active');
    expect(access.stats().entries).toBe(0);
  });
});

describe('createAccessCache: a failing store', () => {
  it('never fails a lookup: onError is told, the service answers, and the store is left alone for a second', async () => {
    const clock = manualClock();
    const errors: unknown[] = [];
    let reads = 0;
    const store: AccessStore = {
      read: async () => {
        reads += 1;
        throw new Error('redis down');
      },
      write: async () => true,
      release: async () => {},
      invalidate: async () => {
        throw new Error('redis down');
      },
      watch: () => () => {},
    };
    const access = cacheWithClock(clientFor(mock.server), { store, onError: (e) => errors.push(e) }, clock);
    expect(await access.isActive(active)).toBe(true);
    expect(await access.isActive({ account_ref_id: 'acct_multi' })).toBe(true);
    expect(reads).toBe(1);
    clock.advance(1_000);
    expect(await access.isActive({ account_ref_id: 'acct_past_due' })).toBe(false);
    expect(reads).toBe(2);
    // invalidate still drops this process's answers when the store cannot be told, tells onError,
    // and rejects: the other instances still hold theirs, so the caller must hear it.
    const failed = await caught(() => access.invalidate('acct_active'));
    expect(failed.message).toBe('redis down');
    await access.isActive(active);
    expect(statusRequests()).toBe(2);
    expect(errors.map((e) => (e as Error).message)).toEqual(['redis down', 'redis down', 'redis down']);
  });
});

describe('createAccessCache: bounded memory', () => {
  it('keeps at most maxEntries answers of 100k keys, the ones not read lately first out', async () => {
    // Answers come from a store the test fills, so 100k keys need no 100k requests.
    const store = answeringStore();
    const access = createAccessCache(clientFor(mock.server), { maxEntries: 1_000, store });
    await access.isActive({ account_ref_id: 'hot' });
    for (let i = 0; i < 100_000; i += 1) {
      await access.isActive({ account_ref_id: `acct_${i}` });
      if (i % 500 === 0) await access.isActive({ account_ref_id: 'hot' });
      if (i % 10_000 === 0) expect(access.stats().entries).toBeLessThanOrEqual(1_000);
    }
    expect(access.stats().entries).toBe(1_000);
    const reads = store.reads;
    await access.isActive({ account_ref_id: 'hot' });
    expect(store.reads).toBe(reads);
    await access.isActive({ account_ref_id: 'acct_0' });
    expect(store.reads).toBe(reads + 1);
    expect(mock.server.requests.count()).toBe(0);
  });
});

/** The demo seed's one subscription of acct_active. */
function activeSubscription(): string {
  return subscriptionOf('acct_active');
}
function pastDueSubscription(): string {
  return subscriptionOf('acct_past_due');
}
function subscriptionOf(account: string): string {
  const id = mock.server.store.subscriptions(account)[0]?.subscription_id;
  if (!id) throw new Error(`no subscription for ${account}`);
  return id;
}
