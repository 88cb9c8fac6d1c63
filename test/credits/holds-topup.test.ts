import { describe, expect, it } from 'vitest';
import { createCreditHolds, type HoldStore, memoryHoldStore } from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { clientFor, useMockServer } from '../helpers.js';

// A top-up is seen: a balance read that a settle overtook (the settle lands in the store while the
// read is on its way to it) is lowered by what the settle debited, never replaced by the balance
// known from before the top-up. The read is held open by a store whose setBalance first lets a
// settle land, exactly between the service's answer and the store's step.
const mock = useMockServer();
const PRODUCT = DEMO.products.aiAssistant.product_code;
const METER = DEMO.meters.credits;

let n = 0;
async function account(balance: number) {
  const account_ref_id = `acct_topup_${n++}`;
  await mock.server.lifecycle.subscribe({ account_ref_id });
  mock.server.store.setBalance(account_ref_id, PRODUCT, METER, balance);
  return { account_ref_id, product_code: PRODUCT, meter_code: METER };
}

/** `base`, whose next setBalance first runs what `during` was given (a settle landing meanwhile). */
function heldOpen(base: HoldStore): { store: HoldStore; during(step: () => Promise<unknown>): void } {
  let next: (() => Promise<unknown>) | undefined;
  return {
    store: {
      ...base,
      async setBalance(ledger, balance, fence) {
        const step = next;
        next = undefined;
        await step?.();
        return base.setBalance(ledger, balance, fence);
      },
    },
    during(step) {
      next = step;
    },
  };
}

describe('createCreditHolds: a top-up is seen while settles land during balance reads', () => {
  it('after invalidate, a settle during the read: the top-up counts, less the settle’s debit', async () => {
    const ledger = await account(100);
    const { store, during } = heldOpen(memoryHoldStore());
    const holds = createCreditHolds(clientFor(mock.server), { store });
    const open = await holds.reserve({ ...ledger, quantity: 50 });
    if (!open.approved) throw new Error('refused');
    // The customer tops up to 1 100; the webhook invalidates.
    mock.server.store.setBalance(ledger.account_ref_id, PRODUCT, METER, 1_100);
    await holds.invalidate(ledger.account_ref_id);
    during(() => open.hold.settle(50));
    expect(await holds.reserve({ ...ledger, quantity: 500 })).toMatchObject({
      approved: true,
      available: 550,
    });
    expect(mock.server.store.balance(ledger.account_ref_id, PRODUCT, METER)).toBe(1_050);
    // And the reservation right after, without a read.
    expect(await holds.reserve({ ...ledger, quantity: 500 })).toMatchObject({
      approved: true,
      available: 50,
    });
    expect(holds.stats().balanceReads).toBe(2);
  });

  it('without a webhook, balanceTtlMs 300: three rounds 350 ms apart, each with a settle of 1 during the read, see the top-up', async () => {
    const ledger = await account(100);
    let now = 1_000_000;
    const { store, during } = heldOpen(memoryHoldStore({ now: () => now }));
    const holds = createCreditHolds(clientFor(mock.server), { store, balanceTtlMs: 300 });
    expect((await holds.reserve({ ...ledger, quantity: 1 })).approved).toBe(true); // reads 100
    mock.server.store.setBalance(ledger.account_ref_id, PRODUCT, METER, 1_100);
    for (let round = 0; round < 3; round++) {
      const small = await holds.reserve({ ...ledger, quantity: 1 });
      if (!small.approved) throw new Error('refused');
      now += 350;
      during(() => small.hold.settle(1));
      const big = await holds.reserve({ ...ledger, quantity: 500 });
      expect(big).toMatchObject({ approved: true });
      if (big.approved) await big.hold.release();
    }
    expect(mock.server.store.balance(ledger.account_ref_id, PRODUCT, METER)).toBe(1_097);
  });
});
