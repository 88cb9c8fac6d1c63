import { describe, expect, it } from 'vitest';
import { type HoldStore, InvalidRequestError, memoryHoldStore } from '../../src/index.js';
import { collectGarbage } from '../helpers.js';
import { freshLedger, holdStoreContract } from './hold-contract.js';
import { holdNamespaceCase } from './hold-namespace.js';

holdStoreContract('memoryHoldStore', async () => {
  let now = 1_000_000;
  const store = memoryHoldStore({ now: () => now });
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
});

// A test clock at the epoch (`now: () => 0`, fake timers set to 0) is a clock like any other.
holdStoreContract('memoryHoldStore on a clock started at the epoch', async () => {
  let now = 0;
  const store = memoryHoldStore({ now: () => now });
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
});

holdNamespaceCase(
  'memoryHoldStore shared by two clients',
  async () => memoryHoldStore(),
  async () => '',
);

describe('memoryHoldStore', () => {
  it('refuses options that are not its own before anything is kept', () => {
    expect(() => memoryHoldStore({ now: 5 as never })).toThrow(InvalidRequestError);
    expect(() => memoryHoldStore({ clock: Date.now } as never)).toThrow(/options.clock/);
  });
});

describe('memoryHoldStore forgets what it no longer needs', () => {
  const TTL = 1_000;
  /** `count` accounts, one after another, each reserved and settled, the clock moving 1 ms each. */
  async function serve(store: HoldStore, clock: { now: number }, count: number, from: number): Promise<void> {
    for (let i = from; i < from + count; i++) {
      const ledger = { account: `acct_${i}`, product: 'ai-assistant', meter: 'credits' };
      const id = `hold_${i}`;
      const first = await store.reserve(ledger, { id, quantity: 5, ttlMs: 60_000 }, TTL);
      if (first.status !== 'stale') throw new Error(`expected stale, got ${JSON.stringify(first)}`);
      await store.setBalance(ledger, 100, first.fence);
      const granted = await store.reserve(ledger, { id, quantity: 5, ttlMs: 60_000 }, TTL);
      if (granted.status !== 'granted') throw new Error(`expected granted, got ${JSON.stringify(granted)}`);
      await store.settle(ledger, id, 95, 5);
      clock.now += 1;
    }
  }
  /** The heap after a full collection, in bytes. */
  async function heap(): Promise<number> {
    await collectGarbage();
    return process.memoryUsage().heapUsed;
  }

  it('100,000 accounts reserved and settled leave the heap where 1,000 leave it (within 4 MB)', async () => {
    const small = { now: 1_000_000 };
    const smallStore = memoryHoldStore({ now: () => small.now });
    const large = { now: 1_000_000 };
    const largeStore = memoryHoldStore({ now: () => large.now });
    await serve(smallStore, small, 1_000, 0);
    const base = await heap();
    await serve(largeStore, large, 100_000, 0);
    const after = await heap();
    // Kept, 100,000 ledgers take some 40 MB; forgotten once stale, the store holds those of the
    // last balanceTtlMs (1,000 accounts, as the small one) and a few the sweep has not reached.
    expect(after - base).toBeLessThan(4 * 1024 * 1024);
    // Both stores still answer (and are still referenced here, so neither was collected).
    expect((await smallStore.reserve(freshLedger(), { id: 'x', quantity: 1, ttlMs: 1 }, TTL)).status).toBe(
      'stale',
    );
    expect((await largeStore.reserve(freshLedger(), { id: 'x', quantity: 1, ttlMs: 1 }, TTL)).status).toBe(
      'stale',
    );
  });

  it('never forgets a ledger with an unexpired hold, nor a balance still fresh', async () => {
    const clock = { now: 1_000_000 };
    const store = memoryHoldStore({ now: () => clock.now });
    const held = freshLedger();
    const first = await store.reserve(held, { id: 'a', quantity: 1, ttlMs: 10 * TTL }, TTL);
    if (first.status !== 'stale') throw new Error('expected stale');
    await store.setBalance(held, 10, first.fence);
    expect((await store.reserve(held, { id: 'a', quantity: 10, ttlMs: 10 * TTL }, TTL)).status).toBe(
      'granted',
    );
    // Thousands of other accounts come and go long after: the sweep passes the held ledger many times.
    await serve(store, clock, 5_000, 0);
    expect(await store.release(held, 'a')).toEqual({ held: true, balance: 10 });
  });
});
