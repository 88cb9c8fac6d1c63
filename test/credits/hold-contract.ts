import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type HoldLedger,
  type HoldStore,
  type HoldStoreReserve,
  InvalidRequestError,
} from '../../src/index.js';

/** A hold store under test, and how to let time pass for it. */
export interface HoldStoreSubject {
  store: HoldStore;
  /** Lets `ms` pass (a fake clock moves; for Redis and PostgreSQL, real time passes). */
  advance(ms: number): Promise<void>;
}

/** Long enough that a loaded machine still sees a hold or a balance as fresh; short enough to wait out. */
const SHORT = 250;
const LONG = 60_000;

let n = 0;
/** A ledger no other test touches (stores may be shared across tests). */
export const freshLedger = (over: Partial<HoldLedger> = {}): HoldLedger => ({
  account: `acct_${process.pid}_${Date.now()}_${n++}`,
  product: 'ai-assistant',
  meter: 'credits',
  ...over,
});
const hold = (quantity: number, ttlMs = LONG) => ({ id: crypto.randomUUID(), quantity, ttlMs });

type Granted = Extract<HoldStoreReserve, { available: number }>;
type Stale = Extract<HoldStoreReserve, { status: 'stale' }>;

function stale(r: HoldStoreReserve): Stale {
  if (r.status !== 'stale') throw new Error(`expected stale, got ${JSON.stringify(r)}`);
  return r;
}
function counted(r: HoldStoreReserve): Granted {
  if (r.status === 'stale') throw new Error(`expected a fresh balance, got ${JSON.stringify(r)}`);
  return r;
}
/** A ledger whose balance is `balance`, read just now. */
async function funded(store: HoldStore, balance: number, ledger = freshLedger()): Promise<HoldLedger> {
  const r = stale(await store.reserve(ledger, hold(1), LONG));
  await store.setBalance(ledger, balance, r.fence);
  return ledger;
}

/**
 * The {@link HoldStore} contract: what `memoryHoldStore`, `redisHoldStore` and `postgresHoldStore`
 * all answer the same way (store.ts states the rules).
 */
export function holdStoreContract(name: string, subject: () => Promise<HoldStoreSubject>): void {
  describe(`${name}: the HoldStore contract`, () => {
    it('an unknown ledger is stale; once its balance is set, holds are granted while it covers them', async () => {
      const { store } = await subject();
      const ledger = freshLedger();
      const first = stale(await store.reserve(ledger, hold(10), LONG));
      expect(first.expired).toBe(0);
      await store.setBalance(ledger, 100, first.fence);
      expect(counted(await store.reserve(ledger, hold(60), LONG))).toEqual({
        status: 'granted',
        available: 40,
        expired: 0,
      });
      expect(counted(await store.reserve(ledger, hold(50), LONG))).toEqual({
        status: 'refused',
        available: 40,
        expired: 0,
      });
      expect(counted(await store.reserve(ledger, hold(40), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
      expect(counted(await store.reserve(ledger, hold(1), LONG))).toEqual({
        status: 'refused',
        available: 0,
        expired: 0,
      });
    });

    it('release frees a hold once; a second release and an unknown id find nothing', async () => {
      const { store } = await subject();
      const ledger = await funded(store, 10);
      const h = hold(10);
      expect(counted(await store.reserve(ledger, h, LONG)).status).toBe('granted');
      expect(counted(await store.reserve(ledger, hold(1), LONG)).status).toBe('refused');
      expect(await store.release(ledger, h.id)).toEqual({ held: true, balance: 10 });
      expect(await store.release(ledger, h.id)).toEqual({ held: false, balance: 10 });
      expect(await store.release(ledger, 'no-such-hold')).toEqual({ held: false, balance: 10 });
      expect(counted(await store.reserve(ledger, hold(10), LONG)).status).toBe('granted');
    });

    it('settle frees the hold and lowers the balance to the debit’s remaining balance, never raises it', async () => {
      const { store } = await subject();
      const ledger = await funded(store, 100);
      const a = hold(30);
      const b = hold(30);
      await store.reserve(ledger, a, LONG);
      await store.reserve(ledger, b, LONG);
      expect(await store.settle(ledger, a.id, 80)).toEqual({ held: true, balance: 80 });
      // An answer that arrives late (from before a's debit) does not raise it again.
      expect(await store.settle(ledger, b.id, 90)).toEqual({ held: true, balance: 80 });
      expect(await store.settle(ledger, b.id, 70)).toEqual({ held: false, balance: 70 });
      expect(counted(await store.reserve(ledger, hold(71), LONG)).status).toBe('refused');
      expect(counted(await store.reserve(ledger, hold(70), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
    });

    it('a hold expires after its ttlMs: the next reservation drops it and counts it; freeing it then finds nothing', async () => {
      const { store, advance } = await subject();
      const ledger = await funded(store, 10);
      const h = hold(10, SHORT);
      expect(counted(await store.reserve(ledger, h, LONG)).status).toBe('granted');
      expect(counted(await store.reserve(ledger, hold(1), LONG)).status).toBe('refused');
      await advance(SHORT + 100);
      expect(counted(await store.reserve(ledger, hold(10), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 1,
      });
      expect((await store.release(ledger, h.id)).held).toBe(false);
    });

    it('a balance read longer than balanceTtlMs ago is stale; a read then taken as it is (a top-up is seen)', async () => {
      const { store, advance } = await subject();
      const ledger = await funded(store, 10);
      const h = hold(10);
      await store.reserve(ledger, h, LONG);
      await advance(SHORT + 100);
      const r = stale(await store.reserve(ledger, hold(5), SHORT));
      await store.setBalance(ledger, 50, r.fence);
      // The unexpired hold still counts against the new balance.
      expect(counted(await store.reserve(ledger, hold(40), SHORT))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
    });

    it('a settle while the balance was read: the lower of the two is kept, and fresh', async () => {
      const { store, advance } = await subject();
      const ledger = await funded(store, 100);
      const a = hold(10);
      await store.reserve(ledger, a, LONG);
      await advance(SHORT + 100);
      const r = stale(await store.reserve(ledger, hold(1), SHORT));
      await store.settle(ledger, a.id, 90); // the debit lands while the read (from before it) is in flight
      await store.setBalance(ledger, 100, r.fence);
      expect(counted(await store.reserve(ledger, hold(91), LONG)).status).toBe('refused');
      expect(counted(await store.reserve(ledger, hold(90), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
    });

    it('an invalidation while the balance was read: the balance stays stale, to be read again', async () => {
      const { store } = await subject();
      const ledger = freshLedger();
      const r = stale(await store.reserve(ledger, hold(1), LONG));
      await store.invalidate(ledger.account);
      await store.setBalance(ledger, 100, r.fence);
      const again = stale(await store.reserve(ledger, hold(1), LONG));
      await store.setBalance(ledger, 100, again.fence);
      expect(counted(await store.reserve(ledger, hold(100), LONG)).status).toBe('granted');
    });

    it('invalidate makes every balance of the account stale, and only of that account', async () => {
      const { store } = await subject();
      const one = await funded(store, 10);
      const other = await funded(store, 10, { ...one, meter: 'tokens' });
      const stranger = await funded(store, 10);
      await store.invalidate(one.account);
      stale(await store.reserve(one, hold(1), LONG));
      stale(await store.reserve(other, hold(1), LONG));
      expect(counted(await store.reserve(stranger, hold(1), LONG)).status).toBe('granted');
    });

    it('ledgers are apart: accounts, products and meters whose names run into each other never share one', async () => {
      const { store } = await subject();
      const base = freshLedger();
      const a = await funded(store, 10, { account: `${base.account}:x`, product: 'y', meter: 'z' });
      const b = { account: base.account, product: 'x:y', meter: 'z' };
      const c = { account: `${base.account}{`, product: '}y', meter: 'z' };
      const d = { account: `${base.account} ✓ 🧾`, product: 'p"\\', meter: "m'%" };
      expect(counted(await store.reserve(a, hold(10), LONG)).status).toBe('granted');
      for (const ledger of [b, c, d]) {
        const r = stale(await store.reserve(ledger, hold(1), LONG));
        await store.setBalance(ledger, 5, r.fence);
        expect(counted(await store.reserve(ledger, hold(5), LONG))).toEqual({
          status: 'granted',
          available: 0,
          expired: 0,
        });
      }
    });

    it('a reservation resent with the same hold id (its answer lost) is granted again and counted once', async () => {
      const { store } = await subject();
      const ledger = await funded(store, 10);
      const h = hold(6);
      expect(counted(await store.reserve(ledger, h, LONG))).toEqual({
        status: 'granted',
        available: 4,
        expired: 0,
      });
      expect(counted(await store.reserve(ledger, h, LONG))).toEqual({
        status: 'granted',
        available: 4,
        expired: 0,
      });
      // Also when the rest of the balance is held, and so none is left for a new hold.
      const rest = hold(4);
      expect(counted(await store.reserve(ledger, rest, LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
      expect(counted(await store.reserve(ledger, rest, LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
      expect(counted(await store.reserve(ledger, hold(1), LONG)).status).toBe('refused');
      expect(await store.release(ledger, h.id)).toEqual({ held: true, balance: 10 });
      expect(await store.release(ledger, rest.id)).toEqual({ held: true, balance: 10 });
      expect(counted(await store.reserve(ledger, hold(10), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
    });

    it('a bad argument rejects with an InvalidRequestError naming it, and changes nothing', async () => {
      const { store } = await subject();
      const ledger = await funded(store, 10);
      const calls: [Promise<unknown>, RegExp][] = [
        [store.reserve({ ...ledger, account: '\uD800' }, hold(1), LONG), /ledger\.account/],
        [store.reserve({ ...ledger, product: 'a\u0000b' }, hold(1), LONG), /ledger\.product/],
        [store.reserve(null as never, hold(1), LONG), /ledger\.account/],
        [store.reserve(ledger, hold(1.5), LONG), /hold\.quantity/],
        [store.reserve(ledger, hold(0), LONG), /hold\.quantity/],
        [store.reserve(ledger, hold(1, Number.NaN), LONG), /hold\.ttlMs/],
        [store.reserve(ledger, { ...hold(1), id: 7 } as never, LONG), /hold\.id/],
        [store.reserve(ledger, null as never, LONG), /hold\.id/],
        [store.reserve(ledger, hold(1), 0), /balanceTtlMs/],
        [store.setBalance(ledger, 1.5, '0:0'), /balance/],
        [store.setBalance(ledger, 10, 42 as never), /fence/],
        [store.settle(ledger, 'id', Number.MAX_SAFE_INTEGER + 2), /remaining/],
        [store.settle(ledger, undefined as never, 5), /id/],
        [store.release({ ...ledger, meter: 7 } as never, 'id'), /ledger\.meter/],
        [store.invalidate(undefined as never), /account/],
      ];
      for (const [call, field] of calls) {
        const error = await call.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect(String(error)).toMatch(field);
      }
      // Nothing was held, settled or invalidated by them.
      expect(counted(await store.reserve(ledger, hold(10), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
    });

    it('concurrent reservations never hold more than the balance (atomic)', async () => {
      const { store } = await subject();
      const ledger = await funded(store, 100);
      const results = await Promise.all(
        Array.from({ length: 40 }, () => store.reserve(ledger, hold(10), LONG)),
      );
      expect(results.filter((r) => r.status === 'granted')).toHaveLength(10);
      expect(results.filter((r) => r.status === 'refused')).toHaveLength(30);
    });

    it('agrees with a model over random reserve, settle and release sequences', async () => {
      const { store } = await subject();
      const step = fc.oneof(
        fc.record({ op: fc.constant('reserve' as const), quantity: fc.integer({ min: 1, max: 40 }) }),
        fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), used: fc.nat({ max: 40 }) }),
        fc.record({ op: fc.constant('release' as const), pick: fc.nat() }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 100 }),
          fc.array(step, { maxLength: 12 }),
          async (start, steps) => {
            const ledger = await funded(store, start);
            let balance = start;
            const held = new Map<string, number>();
            for (const s of steps) {
              if (s.op === 'reserve') {
                const h = hold(s.quantity);
                const r = counted(await store.reserve(ledger, h, LONG));
                const free = balance - [...held.values()].reduce((x, y) => x + y, 0);
                expect(r.status).toBe(free >= s.quantity ? 'granted' : 'refused');
                if (r.status === 'granted') held.set(h.id, s.quantity);
                expect(r.available).toBe(Math.max(0, free - (r.status === 'granted' ? s.quantity : 0)));
                continue;
              }
              const ids = [...held.keys()];
              if (ids.length === 0) continue;
              const id = ids[s.pick % ids.length]!;
              const quantity = held.get(id)!;
              held.delete(id);
              if (s.op === 'release') {
                expect(await store.release(ledger, id)).toEqual({ held: true, balance });
              } else {
                balance -= Math.min(s.used, quantity);
                expect(await store.settle(ledger, id, balance)).toEqual({ held: true, balance });
              }
            }
          },
        ),
        { numRuns: 25 },
      );
    });
  });
}
