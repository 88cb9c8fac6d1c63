import type { BillingClient } from '../client.js';
import { InvalidRequestError } from '../core/errors/index.js';
import type { RequestOptions } from '../core/options.js';
import { checkArgs, checkOptions, integer } from '../internal/checks.js';
import { requestRules } from '../internal/options.js';
import type { DebitResult } from '../schemas/usage.js';
import { type Clock, realClock } from '../util/clock.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { refusedSettle } from './refused.js';
import type { HoldLedger, HoldStore } from './store.js';
import type { CreditHold, HoldExtendResult } from './types.js';

/** What a hold needs of the holds that made it. */
export interface HoldHome {
  readonly billing: BillingClient;
  readonly store: HoldStore;
  /** The holds' clock (a test seam): what a hold's keeper times its extends with. */
  readonly clock: Clock;
  /**
   * Counts and publishes a hold freed: `settled` (the debit approved, `quantity` debited),
   * `unpaid` (the debit refused, `quantity` used), `released`.
   */
  freed(kind: 'settled' | 'unpaid' | 'released', quantity: number): void;
  /** Tells `onError` of a failure the caller's answer does not carry (a store's, a settle refused). */
  report(error: unknown): void;
}

/**
 * One reservation. Its state moves once: open → settled (with a `used` fixed by the first settle)
 * or open → released. A settle whose debit failed leaves it open, its `used` fixed, so the next
 * settle sends the same debit under the same key.
 */
export class Hold implements CreditHold {
  readonly #home: HoldHome;
  /** The account, product and meter, as the service names them. */
  readonly #ledger: HoldLedger;
  /** The same ledger as the store keeps it (see {@link HoldHome.stored}). */
  readonly #stored: HoldLedger;
  readonly id: string;
  readonly event_key: string;
  readonly quantity: number;
  readonly ttlMs: number;
  /** Fixed by the first settle: a later one must ask the same (the service keys the debit by event_key). */
  #used: number | undefined;
  /** The settle under way or done; cleared when it failed, so it can be asked again. */
  #settling: Promise<DebitResult> | undefined;
  #released: Promise<void> | undefined;

  constructor(
    home: HoldHome,
    ledger: HoldLedger,
    stored: HoldLedger,
    id: string,
    eventKey: string,
    quantity: number,
    ttlMs: number,
  ) {
    this.#home = home;
    this.#ledger = ledger;
    this.#stored = stored;
    this.id = id;
    this.event_key = eventKey;
    this.quantity = quantity;
    this.ttlMs = ttlMs;
  }

  /** The clock of the holds that made it. */
  get clock(): Clock {
    return this.#home.clock;
  }

  get account_ref_id(): string {
    return this.#ledger.account;
  }
  get product_code(): string {
    return this.#ledger.product;
  }
  get meter_code(): string {
    return this.#ledger.meter;
  }

  settle(used: number, options?: RequestOptions): Promise<DebitResult> {
    try {
      checkArgs('hold.settle', [['used', [integer(0, this.quantity)], used]]);
      checkOptions('hold.settle', options, requestRules);
      if (this.#released) throw this.#misuse('hold.settle', 'was released: it cannot be settled');
      if (this.#used !== undefined && this.#used !== used) {
        throw this.#misuse(
          'hold.settle',
          `was settled with ${this.#used}: settle it again only with the same used`,
        );
      }
    } catch (error) {
      return Promise.reject(error);
    }
    this.#used = used;
    if (!this.#settling) {
      const settling = this.#settle(used, options);
      this.#settling = settling;
      settling.then(
        (result) => {
          const refused = refusedSettle(this, used, result);
          this.#home.freed(refused ? 'unpaid' : 'settled', used);
          // Heard by the app, as well as answered: the work was done and is not paid for.
          if (refused) this.#home.report(refused);
        },
        () => {
          this.#settling = undefined;
        },
      );
    }
    return this.#settling;
  }

  release(): Promise<void> {
    if (this.#used !== undefined) {
      return Promise.reject(
        this.#misuse('hold.release', 'was settled: it cannot be released (settle frees it)'),
      );
    }
    if (!this.#released) {
      this.#released = this.#home.store
        .release(this.#stored, this.id)
        .then(() => this.#home.freed('released', 0));
      // A failed release leaves the hold to expire; the next call may try again.
      this.#released.catch(() => {
        this.#released = undefined;
      });
    }
    return this.#released;
  }

  async extend(ttlMs?: number): Promise<HoldExtendResult> {
    if (ttlMs !== undefined) checkArgs('hold.extend', [['ttlMs', [integer(1, MAX_TIMER_MS)], ttlMs]]);
    // Settled (a settle asked counts: its debit may be under way) or released here: the store's
    // hold is gone or going, and must not be kept.
    if (this.#used !== undefined) return { extended: false, reason: 'settled' };
    if (this.#released) return { extended: false, reason: 'released' };
    const extended = await this.#home.store.extend(this.#stored, this.id, ttlMs ?? this.ttlMs);
    return extended ? { extended: true } : { extended: false, reason: 'expired' };
  }

  async #settle(used: number, options: RequestOptions | undefined): Promise<DebitResult> {
    const { billing, store } = this.#home;
    if (used === 0) {
      const { balance } = await store.release(this.#stored, this.id);
      const remaining =
        balance ??
        (
          await billing.usage.balance(
            {
              account_ref_id: this.#ledger.account,
              product_code: this.#ledger.product,
              meter_code: this.#ledger.meter,
            },
            options,
          )
        ).balance;
      return { approved: true, debited: 0, remaining_balance: remaining, event_key: this.event_key };
    }
    const result = await billing.usage.debit(
      {
        account_ref_id: this.#ledger.account,
        product_code: this.#ledger.product,
        meter_code: this.#ledger.meter,
        quantity: used,
        event_key: this.event_key,
      },
      options,
    );
    try {
      await store.settle(
        this.#stored,
        this.id,
        result.remaining_balance,
        result.approved ? result.debited : 0,
      );
    } catch (error) {
      // The debit went through: its result stands. The hold stays until its ttl, which only holds back credits.
      this.#home.report(error);
    }
    return result;
  }

  #misuse(operation: string, message: string): InvalidRequestError {
    return new InvalidRequestError(operation, [{ field: 'hold', message }]);
  }
}

/**
 * The clock of the holds that made `hold` (a test seam, see `withTestClock`); the real clock for a
 * hold made elsewhere.
 */
export function holdClock(hold: CreditHold): Clock {
  return hold instanceof Hold ? hold.clock : realClock;
}
