import { checkOptions, func, type Rule } from '../internal/checks.js';
import {
  type HoldLedger,
  type HoldRequest,
  type HoldStore,
  type HoldStoreFree,
  type HoldStoreReserve,
  ledgerKey,
} from './store.js';
import { checkStoreArgs } from './store-args.js';

/** Options of {@link memoryHoldStore}. */
export interface MemoryHoldStoreOptions {
  /** The store's clock, in ms since the epoch; default `Date.now` (a test may pass its own). */
  now?: (() => number) | undefined;
}

const optionRules = { now: [func] } satisfies Record<keyof MemoryHoldStoreOptions, Rule[]>;

const OPERATION = 'memoryHoldStore';

/** Accounts looked at per store step for ledgers to forget: the sweep's cost is bounded and amortised. */
const SWEEP = 2;

/** One ledger's state, as every store keeps it (see store.ts for the rules). */
interface LedgerState {
  /** The known balance; `null` until one is read. */
  balance: number | null;
  /** When the balance was read (the store's clock); `null`: stale (never read, or invalidated). */
  readAt: number | null;
  /**
   * Moves on each invalidation of the account. Unique in the store (taken from one counter), so a
   * ledger forgotten and made again never answers a fence handed out before.
   */
  epoch: number;
  /** The credits settles debited so far: a read is lowered by what was debited since its fence. */
  debited: number;
  /** When a step last touched the ledger (the store's clock): untouched a balanceTtlMs, it is stale. */
  touchedAt: number;
  /** Unexpired holds by id: quantity and expiry. */
  holds: Map<string, { quantity: number; expiresAt: number }>;
}

/**
 * A {@link HoldStore} in this process's memory: `createCreditHolds`' default. Reservations are
 * shared by everything in this process that uses the same store, and by nothing else: where several
 * instances debit one account, use `redisHoldStore` (`billing-sdk/redis`) or `postgresHoldStore`
 * (`billing-sdk/postgres`).
 *
 * It keeps only what it needs: a ledger with no unexpired hold whose balance went stale (untouched
 * for the longest `balanceTtlMs` asked) is forgotten, a few accounts looked at per step, so a
 * long-running server's store grows with the accounts active within that time, not with every
 * account it has seen. Its holds found expired then are not counted in `stats().expired`.
 *
 * @example
 * ```ts
 * import { BillingClient, createCreditHolds, memoryHoldStore } from 'billing-sdk';
 *
 * const holds = createCreditHolds(new BillingClient(), { store: memoryHoldStore() });
 * ```
 */
export function memoryHoldStore(options: MemoryHoldStoreOptions = {}): HoldStore {
  checkOptions(OPERATION, options, optionRules);
  const now = options.now ?? Date.now;
  /** Ledgers by account, then by {@link ledgerKey}: an invalidation finds its account's at once. */
  const accounts = new Map<string, Map<string, LedgerState>>();
  /** The one counter every epoch is taken from. */
  let epochs = 0;
  /** The longest balanceTtlMs asked: a ledger untouched for it has no fresh balance. */
  let balanceTtl = 0;
  /** Where the sweep for ledgers to forget goes on from (a Map's iterator sees later changes). */
  let cursor: MapIterator<[string, Map<string, LedgerState>]> | undefined;

  const forgettable = (ledger: LedgerState, at: number): boolean => {
    if (at - ledger.touchedAt < balanceTtl) return false;
    for (const hold of ledger.holds.values()) if (hold.expiresAt > at) return false;
    return true;
  };
  /** Forgets the stale ledgers without unexpired holds of the next {@link SWEEP} accounts. */
  const sweep = (at: number): void => {
    for (let i = 0; i < SWEEP; i++) {
      cursor ??= accounts.entries();
      const next = cursor.next();
      if (next.done) {
        cursor = undefined;
        return;
      }
      const [account, ledgers] = next.value;
      for (const [key, ledger] of ledgers) if (forgettable(ledger, at)) ledgers.delete(key);
      if (ledgers.size === 0) accounts.delete(account);
    }
  };
  /** The ledger's state, made when missing; the sweep goes on first. */
  const ledgerOf = (l: HoldLedger, at: number): LedgerState => {
    sweep(at);
    let ledgers = accounts.get(l.account);
    if (!ledgers) {
      ledgers = new Map();
      accounts.set(l.account, ledgers);
    }
    const key = ledgerKey(l);
    let ledger = ledgers.get(key);
    if (!ledger) {
      ledger = { balance: null, readAt: null, epoch: ++epochs, debited: 0, touchedAt: at, holds: new Map() };
      ledgers.set(key, ledger);
    }
    ledger.touchedAt = at;
    return ledger;
  };
  const dropExpired = (ledger: LedgerState, at: number): number => {
    let expired = 0;
    for (const [id, hold] of ledger.holds) {
      if (hold.expiresAt <= at) {
        ledger.holds.delete(id);
        expired++;
      }
    }
    return expired;
  };
  const free = (l: HoldLedger, id: string): { ledger: LedgerState; held: boolean } => {
    const at = now();
    const ledger = ledgerOf(l, at);
    const hold = ledger.holds.get(id);
    ledger.holds.delete(id);
    return { ledger, held: hold !== undefined && hold.expiresAt > at };
  };

  return {
    async reserve(l: HoldLedger, hold: HoldRequest, balanceTtlMs: number): Promise<HoldStoreReserve> {
      checkStoreArgs.reserve(OPERATION, l, hold, balanceTtlMs);
      const at = now();
      balanceTtl = Math.max(balanceTtl, balanceTtlMs);
      const ledger = ledgerOf(l, at);
      const expired = dropExpired(ledger, at);
      let held = 0;
      for (const h of ledger.holds.values()) held += h.quantity;
      // A resend (the same id, its answer lost): granted again, counted once, as every store does.
      if (ledger.holds.has(hold.id)) {
        return { status: 'granted', available: Math.max(0, (ledger.balance ?? 0) - held), expired };
      }
      if (ledger.balance === null || ledger.readAt === null || at - ledger.readAt >= balanceTtlMs) {
        return { status: 'stale', fence: `${ledger.epoch}:${ledger.debited}`, expired };
      }
      const available = ledger.balance - held;
      if (available < hold.quantity) return { status: 'refused', available: Math.max(0, available), expired };
      ledger.holds.set(hold.id, { quantity: hold.quantity, expiresAt: at + hold.ttlMs });
      return { status: 'granted', available: available - hold.quantity, expired };
    },

    async setBalance(l: HoldLedger, balance: number, fence: string): Promise<void> {
      checkStoreArgs.setBalance(OPERATION, l, balance, fence);
      const ledger = ledgerOf(l, now());
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
      checkStoreArgs.settle(OPERATION, l, id, remaining, debited);
      const { ledger, held } = free(l, id);
      ledger.debited += debited;
      if (ledger.balance !== null) ledger.balance = Math.min(ledger.balance, remaining);
      return { held, balance: ledger.balance };
    },

    async release(l: HoldLedger, id: string): Promise<HoldStoreFree> {
      checkStoreArgs.release(OPERATION, l, id);
      const { ledger, held } = free(l, id);
      return { held, balance: ledger.balance };
    },

    async extend(l: HoldLedger, id: string, ttlMs: number): Promise<boolean> {
      checkStoreArgs.extend(OPERATION, l, id, ttlMs);
      // Looked up, never made: extending an unknown hold leaves nothing behind.
      const at = now();
      const ledger = accounts.get(l.account)?.get(ledgerKey(l));
      const hold = ledger?.holds.get(id);
      if (hold === undefined || hold.expiresAt <= at) return false;
      hold.expiresAt = Math.max(hold.expiresAt, at + ttlMs);
      if (ledger !== undefined) ledger.touchedAt = at;
      return true;
    },

    async invalidate(account: string): Promise<void> {
      checkStoreArgs.invalidate(OPERATION, account);
      for (const ledger of accounts.get(account)?.values() ?? []) {
        ledger.epoch = ++epochs;
        ledger.readAt = null;
      }
    },
  };
}
