import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCreditHolds, InvalidRequestError, memoryHoldStore } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { clientFor, useMockServer } from '../helpers.js';

// hold.extend: a live hold keeps its credits past its ttlMs; a hold no longer held is a result.
const mock = useMockServer();
const PRODUCT = DEMO.products.aiAssistant.product_code;
const METER = DEMO.meters.credits;

let n = 0;
async function account(balance: number) {
  const account_ref_id = `acct_extend_${n++}`;
  await mock.server.lifecycle.subscribe({ account_ref_id });
  mock.server.store.setBalance(account_ref_id, PRODUCT, METER, balance);
  return { account_ref_id, product_code: PRODUCT, meter_code: METER };
}

/** Holds on a memory store whose clock the test moves. */
function holdsAt(start = 1_000_000) {
  const clock = { now: start };
  const holds = createCreditHolds(clientFor(mock.server), {
    store: memoryHoldStore({ now: () => clock.now }),
    ttlMs: 300,
  });
  return { clock, holds };
}

describe('hold.extend', () => {
  it('ttlMs 300, an action of 600 ms extending its hold: a reservation at 450 ms does not get the same credits', async () => {
    const ledger = await account(100);
    const { clock, holds } = holdsAt();
    const r = await holds.reserve({ ...ledger, quantity: 100 });
    if (!r.approved) throw new Error('refused');
    expect(r.hold.ttlMs).toBe(300);
    for (const at of [100, 200, 300, 400]) {
      clock.now = 1_000_000 + at;
      expect(await r.hold.extend()).toEqual({ extended: true });
    }
    clock.now = 1_000_000 + 450;
    expect(await holds.reserve({ ...ledger, quantity: 100 })).toEqual({
      approved: false,
      error_code: 'insufficient_credits',
      available: 0,
    });
    clock.now = 1_000_000 + 600;
    expect(await r.hold.settle(100)).toMatchObject({ approved: true, debited: 100, remaining_balance: 0 });
    expect(holds.stats()).toMatchObject({ reserved: 1, refused: 1, settled: 1, expired: 0, open: 0 });
  });

  it('without extend, the hold lapses at its ttlMs and its credits go to the next reservation', async () => {
    const ledger = await account(100);
    const { clock, holds } = holdsAt();
    expect((await holds.reserve({ ...ledger, quantity: 100 })).approved).toBe(true);
    clock.now += 450;
    expect(await holds.reserve({ ...ledger, quantity: 100 })).toMatchObject({ approved: true, available: 0 });
  });

  it('a longer ttlMs given to extend counts from now; never shorter than the hold already counts', async () => {
    const ledger = await account(100);
    const { clock, holds } = holdsAt();
    const r = await holds.reserve({ ...ledger, quantity: 60, ttlMs: 1_000 });
    if (!r.approved) throw new Error('refused');
    expect(await r.hold.extend(10)).toEqual({ extended: true }); // still counts until 1 000
    clock.now += 900;
    expect(await holds.reserve({ ...ledger, quantity: 41 })).toMatchObject({
      approved: false,
      available: 40,
    });
    expect(await r.hold.extend(5_000)).toEqual({ extended: true });
    clock.now += 4_000;
    expect(await holds.reserve({ ...ledger, quantity: 41 })).toMatchObject({
      approved: false,
      available: 40,
    });
  });

  it('a settled, released or expired hold is not extended: a result saying which, nothing sent', async () => {
    const ledger = await account(100);
    const { clock, holds } = holdsAt();
    const settled = await holds.reserve({ ...ledger, quantity: 10 });
    const released = await holds.reserve({ ...ledger, quantity: 10 });
    const lapsed = await holds.reserve({ ...ledger, quantity: 10 });
    if (!settled.approved || !released.approved || !lapsed.approved) throw new Error('refused');
    await settled.hold.settle(5);
    await released.hold.release();
    clock.now += 300;
    expect(await settled.hold.extend()).toEqual({ extended: false, reason: 'settled' });
    expect(await released.hold.extend()).toEqual({ extended: false, reason: 'released' });
    expect(await lapsed.hold.extend()).toEqual({ extended: false, reason: 'expired' });
    // Not brought back: its credits are free for the next reservation.
    expect(await holds.reserve({ ...ledger, quantity: 95 })).toMatchObject({ approved: true, available: 0 });
  });

  it('a ttlMs that is not an integer of ms from 1 to 2^31 − 1 is an InvalidRequestError, the hold untouched', async () => {
    const ledger = await account(100);
    const { holds } = holdsAt();
    const r = await holds.reserve({ ...ledger, quantity: 10 });
    if (!r.approved) throw new Error('refused');
    const bad = fc.oneof(
      fc.integer({ max: 0 }),
      fc.maxSafeNat().filter((v) => v >= 2 ** 31),
      fc.double().filter((d) => !Number.isInteger(d)),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, null, '300', {}),
    );
    await fc.assert(
      fc.asyncProperty(bad, async (ttlMs) => {
        const error = await r.hold.extend(ttlMs as number).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect(String(error)).toMatch(/ttlMs/);
      }),
      { numRuns: 50 },
    );
    expect(await r.hold.extend()).toEqual({ extended: true });
  });
});
