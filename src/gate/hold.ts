import { InvalidRequestError } from '../core/errors/index.js';
import { keepHold } from '../credits/keep.js';
import { refusedSettle } from '../credits/refused.js';
import type { CreditHold } from '../credits/types.js';
import { checkArgs, integer } from '../internal/checks.js';
import type { GateHold } from './types.js';

/**
 * The hold of a route's `credits` need with `hold: true`, as the handler sees it: it says what it
 * used; the adapter settles that after a 2xx answer (the whole hold when it said nothing) and
 * releases it after any other answer or a throw.
 *
 * From its reservation until then, it extends the hold every third of its ttl: a handler or a
 * streamed body that outlives the ttl keeps its credits (another reservation cannot get them),
 * while the holds of a crashed process still come back after one ttl.
 */
export class RouteHold implements GateHold {
  readonly credit: CreditHold;
  #used: number | undefined;
  /** Credits spent that no answer takes back (an AI call's tokens, see {@link spend}). */
  #spent = 0;
  /** Under `gate.check`: no adapter settles this hold, so `use` would be heard by nobody. */
  #leftToCaller = false;
  /** Aborted on close: stops the keeper. */
  readonly #closing = new AbortController();

  constructor(credit: CreditHold) {
    this.credit = credit;
    void keepHold(credit, this.#closing.signal);
  }

  get quantity(): number {
    return this.credit.quantity;
  }

  get event_key(): string {
    return this.credit.event_key;
  }

  use(used: number): void {
    if (this.#leftToCaller) {
      throw new InvalidRequestError('hold.use', [
        {
          field: 'hold',
          message:
            'was reserved by gate.check, which settles nothing: settle it with hold.credit.settle(used), or release it with hold.credit.release()',
        },
      ]);
    }
    checkArgs('hold.use', [['used', [integer(0, this.credit.quantity)], used]]);
    this.#used = used;
  }

  /**
   * Says `spent` credits of the hold were spent for good (the tokens of the AI calls the handler
   * made): the gate settles them even when the answer fails or the client leaves mid-stream, where
   * it would otherwise release the hold. Also what a 2xx answer settles, unless `use` says more.
   */
  spend(spent: number): void {
    checkArgs('hold.spend', [['spent', [integer(0, this.credit.quantity)], spent]]);
    this.#spent = spent;
    this.#used = Math.max(this.#used ?? 0, spent);
  }

  /** Made by `gate.check`: the caller settles the hold itself (`use` throws). */
  leaveToCaller(): void {
    this.#leftToCaller = true;
  }

  /**
   * After the answer: stops keeping the hold, then settles what was used when it succeeded, else
   * releases. A settle the service refused rejects with its `SettleRefusedError`, for the gate's
   * `onError`: the work is unpaid.
   */
  async close(succeeded: boolean): Promise<unknown> {
    this.#closing.abort();
    if (!succeeded && this.#spent === 0) return this.credit.release();
    const used = succeeded ? (this.#used ?? this.credit.quantity) : this.#spent;
    const result = await this.credit.settle(used);
    const refused = refusedSettle(this.credit, used, result);
    if (refused) throw refused;
    return result;
  }
}
