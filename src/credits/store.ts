/**
 * One balance that holds count against: an account's prepaid credits on one product's meter (the
 * three parameters of `usage.balance` and `usage.debit`).
 */
export interface HoldLedger {
  /** The account's `account_ref_id`. */
  readonly account: string;
  /** The product's `product_code`. */
  readonly product: string;
  /** The meter's `meter_code`. */
  readonly meter: string;
}

/**
 * The one key of a ledger, for a map or a store's key: JSON of its three names, so no two ledgers
 * whose names run into each other (`a:b` + `c`, `a` + `b:c`) share one.
 */
export function ledgerKey(ledger: HoldLedger): string {
  return JSON.stringify([ledger.account, ledger.product, ledger.meter]);
}

/** A reservation as {@link HoldStore.reserve} is asked to record it. */
export interface HoldRequest {
  /** The hold's id, unique (a random UUID). */
  readonly id: string;
  /** How many credits it reserves: a positive integer. */
  readonly quantity: number;
  /** How long it counts unless settled or released first, in ms of the store's clock. */
  readonly ttlMs: number;
}

/** What {@link HoldStore.reserve} found, in one atomic step. */
export type HoldStoreReserve =
  | {
      /**
       * `granted`: the hold is recorded; `refused`: the known balance minus the unexpired holds
       * does not cover it (nothing recorded).
       */
      readonly status: 'granted' | 'refused';
      /** The balance minus every unexpired hold, after this step (never below 0). */
      readonly available: number;
      /** Holds of this ledger found expired (and dropped) in this step. */
      readonly expired: number;
    }
  | {
      /**
       * No balance is known for the ledger, or it was read longer than `balanceTtlMs` ago, or its
       * account was invalidated since: nothing recorded. Read the balance from the service and give
       * it to {@link HoldStore.setBalance} with this `fence`, then reserve again.
       */
      readonly status: 'stale';
      /** What {@link HoldStore.setBalance} compares, to tell what happened while the balance was read. */
      readonly fence: string;
      /** Holds of this ledger found expired (and dropped) in this step. */
      readonly expired: number;
    };

/** What {@link HoldStore.settle} and {@link HoldStore.release} did, in one atomic step. */
export interface HoldStoreFree {
  /** True when the hold was there and unexpired (false: settled, released or expired before). */
  readonly held: boolean;
  /** The ledger's known balance after the step; `null` when none is known. */
  readonly balance: number | null;
}

/**
 * Where the instances of one service keep prepaid-credit reservations and the balance they count
 * against: `memoryHoldStore` (one process, the default), `redisHoldStore` (`billing-sdk/redis`),
 * `postgresHoldStore` (`billing-sdk/postgres`). Every method is one atomic step by the store's own
 * clock (instances whose clocks disagree still agree on when a hold expires). A method that rejects
 * (the store is down) fails the reservation: holds never fail open.
 *
 * The balance rules, the same in every store:
 * - a balance read from the service is judged by what happened to the ledger since its `fence`:
 *   the store counts the credits its settles debited, and takes the read minus what settles debited
 *   since the fence, fresh (the read may predate those debits; when it does not, the balance is
 *   only underestimated until the next read). The known balance from before is not kept: it may
 *   predate a top-up, which the read shows. When the account was invalidated meanwhile (or the
 *   store lost the ledger), the lower of the read and the known balance is kept and the balance
 *   stays stale, to be read again;
 * - a debit's `remaining_balance` only lowers the known balance (`min`): answers arrive out of order,
 *   and a higher one may be older than the balance known; a top-up is seen by the next read.
 */
export interface HoldStore {
  /**
   * Drops the ledger's expired holds, then records `hold` when the ledger's balance is fresh (read
   * less than `balanceTtlMs` ago, not invalidated since) and, minus every unexpired hold, covers
   * `hold.quantity`.
   */
  reserve(ledger: HoldLedger, hold: HoldRequest, balanceTtlMs: number): Promise<HoldStoreReserve>;
  /** Records `balance`, read from the service after {@link reserve} answered `stale` with `fence`. */
  setBalance(ledger: HoldLedger, balance: number, fence: string): Promise<void>;
  /**
   * Drops the hold `id` after its debit was answered (approved or refused), lowering the known
   * balance to `remaining` when that is lower, and counts `debited` (what the debit took: 0 when it
   * was refused) against the balance reads in flight (see the balance rules).
   */
  settle(ledger: HoldLedger, id: string, remaining: number, debited: number): Promise<HoldStoreFree>;
  /** Drops the hold `id` without a debit. */
  release(ledger: HoldLedger, id: string): Promise<HoldStoreFree>;
  /**
   * Makes the hold `id` count until at least `ttlMs` from now (the store's clock; it never
   * shortens it). Resolves `true` when the hold was there and unexpired; `false` when it was not
   * (settled, released or expired: an expired hold is not brought back, its credits may be held by
   * another reservation already).
   */
  extend(ledger: HoldLedger, id: string, ttlMs: number): Promise<boolean>;
  /** Marks every balance of the account stale: the next reservation reads it from the service. */
  invalidate(account: string): Promise<void>;
}
