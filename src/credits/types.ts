import type { RequestOptions } from '../core/options.js';
import type { DebitResult } from '../schemas/usage.js';
import type { HoldStore } from './store.js';

/** Options of `createCreditHolds`. */
export interface CreditHoldsOptions {
  /**
   * Where reservations and the balance they count against are kept, shared by every instance that
   * debits the same accounts: `memoryHoldStore()` (one process; the default), `redisHoldStore(client)`
   * from `billing-sdk/redis`, `postgresHoldStore(db)` from `billing-sdk/postgres`.
   */
  store?: HoldStore | undefined;
  /**
   * How long a hold counts when neither settled nor released (a crashed process's reservation comes
   * back then), in ms; a reservation may give its own. An action that may run longer keeps its hold
   * with {@link CreditHold.extend}. Default 60 000.
   */
  ttlMs?: number | undefined;
  /**
   * How long a balance read from the service is trusted, in ms: a debit or a top-up made outside
   * these holds is seen within this time (at once for a top-up whose webhook calls `invalidate`).
   * Default 30 000.
   */
  balanceTtlMs?: number | undefined;
  /**
   * Told of what a caller's answer does not carry: a settle the service refused (a
   * {@link billing-sdk!SettleRefusedError}: the work was done and is unpaid; collect it or cut the
   * customer off), and a store failure after the debit it followed went through (a
   * {@link billing-sdk!StoreError}; the hold then stays until its ttl, which is safe: it only holds
   * back credits). Default: nothing. Called through a guard: what it throws is dropped.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** Parameters of {@link CreditHolds.reserve}. */
export interface ReserveParams {
  /** The account whose prepaid credits are reserved. */
  account_ref_id: string;
  /** The product (usage model `prepaid_credits`). */
  product_code: string;
  /** The product's meter. */
  meter_code: string;
  /** The most the action may cost: a positive integer count of the meter's units. */
  quantity: number;
  /** How long the hold counts unless settled or released, in ms; default the holds' `ttlMs`. */
  ttlMs?: number | undefined;
  /**
   * The `event_key` its settle debits under; default `hold_<the hold's id>`. Give one your client
   * retries with (an `Idempotency-Key`) so that a retried action settles once.
   */
  event_key?: string | undefined;
}

/** What {@link CreditHolds.reserve} answers: switch on `approved`. A refusal is a result, not an exception. */
export type ReserveResult =
  | {
      /** The credits are held for this action. */
      approved: true;
      /** Settle it with what was used, or release it. */
      hold: CreditHold;
      /** The balance minus every unexpired hold (all instances), this one included. */
      available: number;
    }
  | {
      /** Nothing is held. */
      approved: false;
      /** Always `insufficient_credits`: the balance minus every unexpired hold does not cover `quantity`. */
      error_code: 'insufficient_credits';
      /** The balance minus every unexpired hold (all instances): the most a reservation may get now. */
      available: number;
    };

/**
 * Credits held for one action: settle it with what the action used, or release it. Either one
 * frees the reservation; one that does neither expires after its `ttlMs`.
 */
export interface CreditHold {
  /** The hold's id (a random UUID). */
  readonly id: string;
  /** The `event_key` the settle debits under: fixed by the hold, so a retried settle debits once. */
  readonly event_key: string;
  /** The account. */
  readonly account_ref_id: string;
  /** The product. */
  readonly product_code: string;
  /** The meter. */
  readonly meter_code: string;
  /** How many credits are held: the most {@link settle} may debit. */
  readonly quantity: number;
  /** How long the hold counts from its reservation, in ms: what {@link extend} gives it again by default. */
  readonly ttlMs: number;
  /**
   * Makes the hold count `ttlMs` more from now (default: its own {@link CreditHold.ttlMs}; never
   * shorter than it already counts), in one atomic step of the store: for an action that may outlive
   * its ttl (a long LLM stream), call it every third of the ttl or so while the action runs. A short
   * ttl then still brings a crashed process's credits back fast.
   *
   * A hold that is no longer held is a result, not an exception: `{ extended: false, reason }`,
   * `'settled'` or `'released'` (by this hold) or `'expired'` (its ttl passed first: it is not
   * brought back, its credits may be another reservation's already; settling it may be refused).
   *
   * @throws {@link InvalidRequestError} for a bad `ttlMs` (an integer of ms, 1 to 2^31 − 1).
   * @throws {@link StoreError} when the store failed: the hold keeps the expiry it had; call again.
   */
  extend(ttlMs?: number): Promise<HoldExtendResult>;
  /**
   * Debits `used` (an integer, 0 ≤ used ≤ `quantity`) under {@link event_key} and frees the hold;
   * 0 frees it without a debit (`debited: 0`, the balance as last known). Resolves with the
   * service's debit result: a refusal (possible once the hold expired, or when credits were spent
   * outside the holds) is a result, as with `usage.debit`, and is also told to the holds'
   * `onError` as a `SettleRefusedError` and counted in `stats().unpaid`. When the debit fails (a network error
   * after the client's retries) the hold stays: call `settle` again with the same `used` (it
   * debits once); a settle that succeeded answers the same result again.
   *
   * @throws {@link InvalidRequestError} for a bad `used`, a `used` other than an earlier call's, or
   * a hold released before.
   */
  settle(used: number, options?: RequestOptions): Promise<DebitResult>;
  /**
   * Frees the hold without a debit. Nothing happens for a hold already released; a settled hold
   * cannot be released.
   *
   * @throws {@link InvalidRequestError} when the hold was settled.
   */
  release(): Promise<void>;
}

/** What {@link CreditHold.extend} answers: switch on `extended`. */
export type HoldExtendResult =
  | {
      /** The hold counts `ttlMs` more from now (by the store's clock). */
      extended: true;
    }
  | {
      /** Nothing changed: the hold is no longer held. */
      extended: false;
      /** `settled` or `released` through this hold (a settle under way counts), or `expired` before. */
      reason: 'settled' | 'released' | 'expired';
    };

/** Counts of {@link CreditHolds.stats}, since the holds were made, in this process. */
export interface CreditHoldStats {
  /** Reservations granted. */
  reserved: number;
  /** Reservations refused (`insufficient_credits`). */
  refused: number;
  /** Holds settled with a debit the service approved (or with 0). */
  settled: number;
  /**
   * Holds whose settle the service refused (the credits spent elsewhere meanwhile, or the hold
   * expired first): work done and not paid for, each told to `onError` as a `SettleRefusedError`.
   */
  unpaid: number;
  /** Holds released. */
  released: number;
  /** Holds of any instance found expired (dropped by a reservation of this process). */
  expired: number;
  /** Balances read from the service. */
  balanceReads: number;
  /** Holds this process made that are neither settled nor released. */
  open: number;
}

/** Prepaid-credit holds: reserve the most an action may cost, then settle what it used. */
export interface CreditHolds {
  /**
   * Reserves `quantity` credits, atomically in the store, when the account's balance minus every
   * unexpired hold (all instances) covers it.
   *
   * A balance read is shared by every reservation of the ledger that needs it, and made with the
   * client's own settings: `options.signal` stops this caller's wait (an `APIUserAbortError`)
   * without failing the others'; the other request options apply to no shared read.
   *
   * @throws {@link InvalidRequestError} for bad parameters (before anything is sent).
   * @throws {@link StoreError} when the store failed (nothing is held: never fails open), or an
   * API error when the balance could not be read.
   */
  reserve(params: ReserveParams, options?: RequestOptions): Promise<ReserveResult>;
  /**
   * Marks the account's balances stale: the next reservation reads them from the service (give it
   * to the webhook handlers as `holds`, so a top-up is seen at once).
   */
  invalidate(account_ref_id: string): Promise<void>;
  /** Counts since the holds were made, in this process. */
  stats(): CreditHoldStats;
}
