import {
  type AccessCache,
  type AccessCacheOptions,
  type AccessLookupOptions,
  type AccessStore,
  type BillingClient,
  createAccessCache,
} from '../../src/index.js';
import { type Clock, withTestClock } from '../../src/util/clock.js';

/** A clock the test moves by hand; its sleeps last a real macrotask, so polling loops still turn. */
export function manualClock(start = Date.UTC(2026, 0, 1)): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
    sleep(ms, signal, onAbort) {
      if (signal?.aborted) return Promise.reject(onAbort());
      return new Promise((resolve) => setTimeout(resolve, 0)).then(() => {
        now += ms;
      });
    },
  };
}

/** `createAccessCache` on a clock of the test's (through the internal seam, as on the client). */
export function cacheWithClock(
  billing: BillingClient,
  options: AccessCacheOptions,
  clock: Clock,
): AccessCache {
  return createAccessCache(billing, withTestClock(options, clock));
}

/** Lets promise callbacks and one macrotask run: a background refresh gets to send its request. */
export function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Repeats `lookup` until memory answers it within its ttl (`outcome.source` is `'cache'`): a
 * background refresh landed. A bounded poll: fails after `ms`.
 */
export async function refreshed(
  lookup: (options: AccessLookupOptions) => Promise<unknown>,
  ms = 5_000,
): Promise<void> {
  for (const deadline = Date.now() + ms; ; await tick(5)) {
    const outcome: AccessLookupOptions['outcome'] = {};
    await lookup({ outcome });
    if (outcome.source === 'cache') return;
    if (Date.now() > deadline) throw new Error(`no refresh landed within ${ms} ms`);
  }
}

/** An AccessStore holding a fresh "active" answer for every key (the service is never needed), counting its reads. */
export function answeringStore(): AccessStore & { reads: number } {
  const store = {
    reads: 0,
    async read(_key: string, account: string) {
      store.reads += 1;
      const status = {
        account_ref_id: account,
        is_active: true,
        customer_email: 'a@example.com',
        created_at: '2026-01-01T00:00:00Z',
        updated_at: '2026-01-01T00:00:00Z',
        subscription_tier: {},
      };
      return {
        generation: '0',
        leased: false,
        answer: { value: { kind: 'status', status }, ageMs: 0, ttlMs: 60_000 },
      };
    },
    write: async () => true,
    release: async () => {},
    invalidate: async () => {},
    watch: () => () => {},
  };
  return store;
}
