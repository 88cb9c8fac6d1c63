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
  /**
   * Another instance of the store on the same data (its own connection), as a second process of
   * the service would have it; `store` itself where there is no other (memory).
   */
  other?: HoldStore;
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
      expect(await store.settle(ledger, a.id, 80, 20)).toEqual({ held: true, balance: 80 });
      // An answer that arrives late (from before a's debit) does not raise it again.
      expect(await store.settle(ledger, b.id, 90, 10)).toEqual({ held: true, balance: 80 });
      expect(await store.settle(ledger, b.id, 70, 10)).toEqual({ held: false, balance: 70 });
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

    it('a settle while the balance was read: the read less what it debited, fresh', async () => {
      const { store, advance } = await subject();
      const ledger = await funded(store, 100);
      const a = hold(10);
      await store.reserve(ledger, a, LONG);
      await advance(SHORT + 100);
      const r = stale(await store.reserve(ledger, hold(1), SHORT));
      await store.settle(ledger, a.id, 90, 10); // the debit lands while the read (from before it) is in flight
      await store.setBalance(ledger, 100, r.fence);
      expect(counted(await store.reserve(ledger, hold(91), LONG)).status).toBe('refused');
      expect(counted(await store.reserve(ledger, hold(90), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 0,
      });
    });

    it('a top-up read while another instance settles: the read less the debit is fresh, never the balance from before the top-up', async () => {
      const { store, other = store } = await subject();
      const ledger = await funded(store, 100);
      const a = hold(50);
      await store.reserve(ledger, a, LONG);
      // The customer tops up to 1 100; the webhook invalidates; a reservation of 500 reads the
      // balance (1 100, read before the settle's debit) while the other instance settles its 50.
      await store.invalidate(ledger.account);
      const r = stale(await store.reserve(ledger, hold(500), LONG));
      expect(await other.settle(ledger, a.id, 1_050, 50)).toEqual({ held: true, balance: 100 });
      await store.setBalance(ledger, 1_100, r.fence);
      expect(counted(await store.reserve(ledger, hold(500), LONG))).toEqual({
        status: 'granted',
        available: 550,
        expired: 0,
      });
      expect(counted(await other.reserve(ledger, hold(551), LONG)).status).toBe('refused');
      expect(counted(await other.reserve(ledger, hold(550), LONG)).status).toBe('granted');
    });

    it('a read that already saw the settle’s debit is lowered by it too: underestimated until the next read, never over', async () => {
      const { store, other = store } = await subject();
      const ledger = await funded(store, 100);
      const a = hold(30);
      await store.reserve(ledger, a, LONG);
      await store.invalidate(ledger.account);
      const r = stale(await store.reserve(ledger, hold(1), LONG));
      await other.settle(ledger, a.id, 70, 30);
      await store.setBalance(ledger, 70, r.fence); // read after the debit
      expect(counted(await other.reserve(ledger, hold(41), LONG)).status).toBe('refused');
      expect(counted(await other.reserve(ledger, hold(40), LONG)).status).toBe('granted');
    });

    it('settles overlapping every read (no webhook): each read, less what was debited during it, is fresh: a top-up is seen', async () => {
      const { store, advance, other = store } = await subject();
      const ledger = await funded(store, 100);
      let service = 100;
      for (const round of [1, 2]) {
        const a = hold(1);
        expect(counted(await other.reserve(ledger, a, LONG)).status).toBe('granted');
        if (round === 1) service += 1_000; // a top-up the store does not know of
        await advance(SHORT + 100); // the balance grows stale
        const r = stale(await store.reserve(ledger, hold(500), SHORT));
        service -= 1;
        await other.settle(ledger, a.id, service, 1);
        await store.setBalance(ledger, service + 1, r.fence); // read before the debit
        const big = hold(500);
        expect(counted(await store.reserve(ledger, big, SHORT))).toEqual({
          status: 'granted',
          available: service - 500,
          expired: 0,
        });
        await store.release(ledger, big.id);
      }
    });

    it('extend: an unexpired hold counts ttlMs more from now (never less); an expired, released or unknown one is left as it is', async () => {
      const { store, advance, other = store } = await subject();
      const ledger = await funded(store, 30);
      const kept = hold(10, SHORT);
      const lapsed = hold(10, SHORT);
      const long = hold(10, LONG);
      for (const h of [kept, lapsed, long])
        expect(counted(await store.reserve(ledger, h, LONG)).status).toBe('granted');
      expect(await other.extend(ledger, kept.id, LONG)).toBe(true);
      expect(await store.extend(ledger, long.id, 1)).toBe(true); // never shortened
      await advance(SHORT + 100);
      expect(await other.extend(ledger, lapsed.id, LONG)).toBe(false); // expired: not brought back
      expect(counted(await store.reserve(ledger, hold(10), LONG))).toEqual({
        status: 'granted',
        available: 0,
        expired: 1,
      });
      expect(counted(await store.reserve(ledger, hold(1), LONG)).status).toBe('refused');
      expect(await store.release(ledger, kept.id)).toEqual({ held: true, balance: 30 });
      expect(await store.extend(ledger, kept.id, LONG)).toBe(false);
      expect(await store.extend(ledger, 'no-such-hold', LONG)).toBe(false);
      expect(await store.settle(ledger, long.id, 20, 10)).toEqual({ held: true, balance: 20 });
      expect(await other.extend(ledger, long.id, LONG)).toBe(false);
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
        [store.settle(ledger, 'id', Number.MAX_SAFE_INTEGER + 2, 0), /remaining/],
        [store.settle(ledger, undefined as never, 5, 0), /id/],
        [store.settle(ledger, 'id', 5, -1), /debited/],
        [store.settle(ledger, 'id', 5, 1.5), /debited/],
        [store.release({ ...ledger, meter: 7 } as never, 'id'), /ledger\.meter/],
        [store.extend(ledger, undefined as never, 1_000), /id/],
        [store.extend(ledger, 'id', 0), /ttlMs/],
        [store.extend({ ...ledger, account: '\uD800' }, 'id', 1_000), /ledger\.account/],
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
                expect(await store.settle(ledger, id, balance, Math.min(s.used, quantity))).toEqual({
                  held: true,
                  balance,
                });
              }
            }
          },
        ),
        { numRuns: 25 },
      );
    });
  });
}
