import { checkOptions, func, type Rule } from '../internal/checks.js';
import type { HoldLedger, HoldRequest, HoldStore, HoldStoreFree, HoldStoreReserve } from './store.js';

/** Options of {@link memoryHoldStore}. */
export interface MemoryHoldStoreOptions {
  /** The store's clock, in ms since the epoch; default `Date.now` (a test may pass its own). */
  now?: (() => number) | undefined;
}

const optionRules = { now: [func] } satisfies Record<keyof MemoryHoldStoreOptions, Rule[]>;

/** One ledger's state, as every store keeps it (see store.ts for the rules). */
interface Ledger {
  /** The known balance; `null` until one is read. */
  balance: number | null;
  /** When the balance was read (the store's clock); 0: stale (never read, or invalidated). */
  readAt: number;
  /** Moves on each invalidation of the account. */
  epoch: number;
  /** The credits settles debited so far: a read is lowered by what was debited since its fence. */
  debited: number;
  /** Unexpired holds by id: quantity and expiry. */
  holds: Map<string, { quantity: number; expiresAt: number }>;
}

/**
 * A {@link HoldStore} in this process's memory: `createCreditHolds`' default. Reservations are
 * shared by everything in this process that uses the same store, and by nothing else: where several
 * instances debit one account, use `redisHoldStore` (`billing-sdk/redis`) or `postgresHoldStore`
 * (`billing-sdk/postgres`).
 *
 * @example
 * ```ts
 * import { BillingClient, createCreditHolds, memoryHoldStore } from 'billing-sdk';
 *
 * const holds = createCreditHolds(new BillingClient(), { store: memoryHoldStore() });
 * ```
 */
export function memoryHoldStore(options: MemoryHoldStoreOptions = {}): HoldStore {
  checkOptions('memoryHoldStore', options, optionRules);
  const now = options.now ?? Date.now;
  const accounts = new Map<string, Map<string, Ledger>>();

  const ledgerOf = (l: HoldLedger): Ledger => {
    let ledgers = accounts.get(l.account);
    if (!ledgers) {
      ledgers = new Map();
      accounts.set(l.account, ledgers);
    }
    // JSON of the pair: no product and meter pair shares a key with another.
    const key = JSON.stringify([l.product, l.meter]);
    let ledger = ledgers.get(key);
    if (!ledger) {
      ledger = { balance: null, readAt: 0, epoch: 0, debited: 0, holds: new Map() };
      ledgers.set(key, ledger);
    }
    return ledger;
  };
  const dropExpired = (ledger: Ledger, at: number): number => {
    let expired = 0;
    for (const [id, hold] of ledger.holds) {
      if (hold.expiresAt <= at) {
        ledger.holds.delete(id);
        expired++;
      }
    }
    return expired;
  };
  const free = (l: HoldLedger, id: string): { ledger: Ledger; held: boolean } => {
    const ledger = ledgerOf(l);
    const hold = ledger.holds.get(id);
    ledger.holds.delete(id);
    return { ledger, held: hold !== undefined && hold.expiresAt > now() };
  };

  return {
    async reserve(l: HoldLedger, hold: HoldRequest, balanceTtlMs: number): Promise<HoldStoreReserve> {
      const at = now();
      const ledger = ledgerOf(l);
      const expired = dropExpired(ledger, at);
      if (ledger.balance === null || ledger.readAt === 0 || at - ledger.readAt >= balanceTtlMs) {
        return { status: 'stale', fence: `${ledger.epoch}:${ledger.debited}`, expired };
      }
      let held = 0;
      for (const h of ledger.holds.values()) held += h.quantity;
      const available = ledger.balance - held;
      if (available < hold.quantity) return { status: 'refused', available: Math.max(0, available), expired };
      ledger.holds.set(hold.id, { quantity: hold.quantity, expiresAt: at + hold.ttlMs });
      return { status: 'granted', available: available - hold.quantity, expired };
    },

    async setBalance(l: HoldLedger, balance: number, fence: string): Promise<void> {
      const ledger = ledgerOf(l);
      const [epoch, debited] = fence.split(':').map(Number);
      if (epoch === ledger.epoch && debited !== undefined && debited <= ledger.debited) {
        // Only settles came between: the read, less what they debited (it may predate them), is
        // fresh. Never the known balance: it may predate a top-up the read shows.
        ledger.balance = balance - (ledger.debited - debited);
        ledger.readAt = now();
        return;
      }
      // An invalidation (or a fence not of this store): the lower is kept, and read again.
      ledger.balance = ledger.balance === null ? balance : Math.min(ledger.balance, balance);
    },

    async settle(l: HoldLedger, id: string, remaining: number, debited: number): Promise<HoldStoreFree> {
      const { ledger, held } = free(l, id);
      ledger.debited += debited;
      if (ledger.balance !== null) ledger.balance = Math.min(ledger.balance, remaining);
      return { held, balance: ledger.balance };
    },

    async release(l: HoldLedger, id: string): Promise<HoldStoreFree> {
      const { ledger, held } = free(l, id);
      return { held, balance: ledger.balance };
    },

    async extend(l: HoldLedger, id: string, ttlMs: number): Promise<boolean> {
      // Looked up, never made: extending an unknown hold leaves nothing behind.
      const hold = accounts
        .get(l.account)
        ?.get(JSON.stringify([l.product, l.meter]))
        ?.holds.get(id);
      const at = now();
      if (hold === undefined || hold.expiresAt <= at) return false;
      hold.expiresAt = Math.max(hold.expiresAt, at + ttlMs);
      return true;
    },

    async invalidate(account: string): Promise<void> {
      for (const ledger of accounts.get(account)?.values() ?? []) {
        ledger.epoch++;
        ledger.readAt = 0;
      }
    },
  };
}
