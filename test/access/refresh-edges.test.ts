import { describe, expect, it } from 'vitest';
import {
  type AccessLookupOutcome,
  APIUserAbortError,
  createAccessCache,
  InvalidRequestError,
} from '../../src/index.js';
import { caught, clientFor, until, useMockServer } from '../helpers.js';
import { cacheWithClock, manualClock, tick } from './helpers.js';

const mock = useMockServer();
const statusRequests = (account = 'acct_active') =>
  mock.server.requests.count({ method: 'GET', path: `/api/account/${account}/status/` });
const active = { account_ref_id: 'acct_active' };
/** A cache on a manual clock; its client tries once, so a fault is one failure. */
const onClock = (options: Parameters<typeof cacheWithClock>[1]) => {
  const clock = manualClock();
  return { clock, access: cacheWithClock(clientFor(mock.server, { maxRetries: 0 }), options, clock) };
};
const pastDue = { account_ref_id: 'acct_past_due' };

describe('the access cache at the edges of a refresh', () => {
  // A lookup that waits for a refresh marks its slot used, as one answered from memory does.
  it('a slot just answered through a refresh is not the one evicted next', async () => {
    const { clock, access } = onClock({ maxEntries: 2, ttlMs: 60_000, denyTtlMs: 1_000, staleMs: 60_000 });
    await access.isActive(active);
    await access.isActive(pastDue);
    await access.isActive({ account_ref_id: 'acct_multi' }); // evicts acct_active
    clock.advance(1_001);
    // The "no" past denyTtlMs waits for its refresh: acct_past_due is now the most recently used.
    expect(await access.isActive(pastDue)).toBe(false);
    expect(statusRequests('acct_past_due')).toBe(2);
    await access.isActive(active); // one must go: acct_multi (least recently used), not acct_past_due
    const outcome: AccessLookupOutcome = {};
    expect(await access.isActive(pastDue, { outcome })).toBe(false);
    expect(outcome.source).toBe('cache');
    expect(statusRequests('acct_past_due')).toBe(2);
    await access.close();
  });

  // close() ends the wait behind a held "no": the lookup is closed, not answered by that "no".
  it('close() while a lookup waits for a held "no"\'s refresh rejects it with the closed error', async () => {
    const { clock, access } = onClock({
      ttlMs: 30_000,
      denyTtlMs: 1_000,
      staleMs: 30_000,
      onError: () => {},
    });
    expect(await access.isActive(pastDue)).toBe(false);
    clock.advance(1_001);
    mock.server.faults.add({ path: '/api/account/', delayMs: 300 });
    const outcome: AccessLookupOutcome = {};
    const waiting = access.isActive(pastDue, { outcome });
    await until(() => mock.server.activeRequests() === 1);
    await access.close();
    const error = await caught(() => waiting);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(outcome.source).toBeUndefined();
  });

  it('close() while a cold lookup waits rejects typed, never hangs', async () => {
    const access = createAccessCache(clientFor(mock.server));
    mock.server.faults.add({ path: '/api/account/', delayMs: 2_000 });
    const waiting = Promise.all([access.isActive(active), access.status(active)]);
    await until(() => mock.server.activeRequests() === 1);
    await access.close();
    expect(await caught(() => waiting)).toBeInstanceOf(InvalidRequestError);
    expect(access.stats().entries).toBe(0);
  });

  it('invalidate during a refresh: a later lookup never joins the old refresh; its own answer is kept', async () => {
    const access = createAccessCache(clientFor(mock.server));
    mock.server.faults.add({ path: '/api/account/', delayMs: 200, times: 1 });
    const early = access.isActive(active);
    await until(() => mock.server.activeRequests() === 1);
    await access.invalidate('acct_active');
    const late = access.isActive(active);
    await until(() => statusRequests() === 2); // its own request, sent while the early one waits
    expect(await Promise.all([early, late])).toEqual([true, true]);
    await access.isActive(active);
    expect(statusRequests()).toBe(2);
    await access.close();
  });

  it('stale "yes" refresh in flight, invalidate, lookup waits for a new answer (no stale from before)', async () => {
    const { clock, access } = onClock({ ttlMs: 1_000, staleMs: 60_000 });
    await access.isActive(active);
    clock.advance(1_001);
    mock.server.faults.add({ path: '/api/account/', delayMs: 200, times: 1 });
    const o1: AccessLookupOutcome = {};
    expect(await access.isActive(active, { outcome: o1 })).toBe(true);
    expect(o1.source).toBe('stale');
    await until(() => mock.server.activeRequests() === 1);
    await access.invalidate('acct_active');
    mock.server.store.setSubscriptionActive(
      mock.server.store.subscriptions('acct_active')[0]!.subscription_id,
      false,
    );
    const o2: AccessLookupOutcome = {};
    expect(await access.isActive(active, { outcome: o2 })).toBe(false);
    expect(o2.source).toBe('live');
    await until(() => mock.server.activeRequests() === 0);
    await tick(10);
    expect(await access.isActive(active)).toBe(false);
    await access.close();
  });

  it('maxEntries=1: an evicted slot with a pending request still answers its waiters; stays within 1', async () => {
    const access = createAccessCache(clientFor(mock.server), { maxEntries: 1 });
    mock.server.faults.add({ path: '/api/account/', delayMs: 100, times: 2 });
    const a = access.isActive(active);
    const b = access.isActive({ account_ref_id: 'acct_multi' });
    const a2 = access.isActive(active);
    expect(await Promise.all([a, b, a2])).toEqual([true, true, true]);
    expect(access.stats().entries).toBe(1);
    await access.close();
  });

  it("a caller's abort while waiting rejects that caller; the held 'no' path too", async () => {
    const { clock, access } = onClock({ ttlMs: 30_000, denyTtlMs: 1_000, staleMs: 30_000 });
    await access.isActive(pastDue);
    clock.advance(1_001);
    mock.server.faults.add({ path: '/api/account/', delayMs: 200, times: 1 });
    const c = new AbortController();
    const p = access.isActive(pastDue, { signal: c.signal });
    const other = access.isActive(pastDue);
    await until(() => mock.server.activeRequests() === 1);
    c.abort();
    expect(await caught(() => p)).toBeInstanceOf(APIUserAbortError);
    expect(await other).toBe(false);
    expect(statusRequests('acct_past_due')).toBe(2);
    await access.close();
  });

  it('first request failing leaves nothing (entries 0), errors not cached, no onError', async () => {
    const errors: unknown[] = [];
    const access = createAccessCache(clientFor(mock.server, { maxRetries: 0 }), {
      onError: (e) => errors.push(e),
    });
    mock.server.faults.add({ path: '/api/account/', status: 503, times: 1 });
    await caught(() => access.isActive(active));
    expect(access.stats().entries).toBe(0);
    expect(errors).toHaveLength(0);
    expect(await access.isActive(active)).toBe(true);
    expect(access.stats()).toMatchObject({ misses: 2, refreshes: 2, entries: 1 });
    await access.close();
  });
});

describe('past maxEntries and past staleMs', () => {
  it('past maxEntries, the answer read again since it was added outlives one that was not', async () => {
    const access = createAccessCache(clientFor(mock.server), { maxEntries: 2 });
    await access.isActive(active);
    await access.isActive(pastDue);
    const hit: AccessLookupOutcome = {};
    await access.isActive(active, { outcome: hit });
    expect(hit.source).toBe('cache');
    // One must go: acct_past_due, not read since it was added.
    await access.isActive({ account_ref_id: 'acct_multi' });
    const outcome: AccessLookupOutcome = {};
    await access.isActive(active, { outcome });
    expect(outcome.source).toBe('cache');
    expect(statusRequests('acct_active')).toBe(1);
    expect(statusRequests('acct_past_due')).toBe(1);
    await access.isActive(pastDue);
    expect(statusRequests('acct_past_due')).toBe(2);
    await access.close();
  });

  it('a held "no" that grew older than staleMs while its refresh ran is not served when the refresh fails', async () => {
    const { clock, access } = onClock({ ttlMs: 1_000, denyTtlMs: 1_000, staleMs: 2_000 });
    expect(await access.isActive(pastDue)).toBe(false);
    // Past denyTtlMs, within staleMs: the lookup waits for the refresh, which fails late.
    clock.advance(1_500);
    mock.server.faults.add({ path: '/api/account/', status: 503, delayMs: 200, times: 1 });
    const waiting = access.isActive(pastDue);
    await until(() => mock.server.activeRequests() === 1);
    clock.advance(1_000);
    expect(await caught(() => waiting)).toMatchObject({ status: 503 });
    await access.close();
  });
});

describe('onError hears background failures only', () => {
  /** A cache on a manual clock, no retries, every onError call kept. */
  const heard = (staleMs: number) => {
    const errors: unknown[] = [];
    return { errors, ...onClock({ ttlMs: 1_000, staleMs, onError: (e) => errors.push(e) }) };
  };

  it('past staleMs the waiting lookup gets the error: onError is not told too (it is no background failure)', async () => {
    const { clock, errors, access } = heard(2_000);
    await access.isActive(active);
    clock.advance(2_001);
    mock.server.faults.add({ path: '/api/account/', status: 503, times: 1 });
    await caught(() => access.isActive(active));
    expect(errors).toHaveLength(0);
    await access.close();
  });

  it('close() during a background refresh does not tell onError of its own abort', async () => {
    const { clock, errors, access } = heard(60_000);
    await access.isActive(active);
    clock.advance(1_001);
    mock.server.faults.add({ path: '/api/account/', delayMs: 300, times: 1 });
    expect(await access.isActive(active)).toBe(true);
    await until(() => mock.server.activeRequests() === 1);
    await access.close();
    await tick(50);
    expect(errors).toHaveLength(0);
  });

  it('a store watch of every account (bumpAll) drops every answer', async () => {
    let watcher: ((account: string | undefined) => void) | undefined;
    const store = {
      read: async () => ({ generation: '0', leased: true, answer: undefined }),
      write: async () => true,
      release: async () => {},
      invalidate: async () => {},
      watch: (fn: (account: string | undefined) => void) => {
        watcher = fn;
        return () => {};
      },
    };
    const access = createAccessCache(clientFor(mock.server), { store: store as never });
    await access.isActive(active);
    await access.isActive({ account_ref_id: 'acct_multi' });
    await access.isActive(active);
    expect(mock.server.requests.count()).toBe(2);
    watcher?.(undefined);
    await access.isActive(active);
    await access.isActive({ account_ref_id: 'acct_multi' });
    expect(mock.server.requests.count()).toBe(4);
    expect(access.stats().entries).toBe(2);
    await access.close();
  });
});
