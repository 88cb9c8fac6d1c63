import { refusedSettle } from '../credits/refused.js';
import type { CreditHold } from '../credits/types.js';
import { checkArgs, integer } from '../internal/checks.js';
import type { GateHold } from './types.js';

/**
 * The hold of a route's `credits` need with `hold: true`, as the handler sees it: it says what it
 * used; the adapter settles that after a 2xx answer (the whole hold when it said nothing) and
 * releases it after any other answer or a throw.
 */
export class RouteHold implements GateHold {
  readonly credit: CreditHold;
  #used: number | undefined;

  constructor(credit: CreditHold) {
    this.credit = credit;
  }

  get quantity(): number {
    return this.credit.quantity;
  }

  get event_key(): string {
    return this.credit.event_key;
  }

  use(used: number): void {
    checkArgs('hold.use', [['used', [integer(0, this.credit.quantity)], used]]);
    this.#used = used;
  }

  /**
   * After the answer: settle what was used when it succeeded, else release. A settle the service
   * refused rejects with its `SettleRefusedError`, for the gate's `onError`: the work is unpaid.
   */
  async close(succeeded: boolean): Promise<unknown> {
    if (!succeeded) return this.credit.release();
    const used = this.#used ?? this.credit.quantity;
    const result = await this.credit.settle(used);
    const refused = refusedSettle(this.credit, used, result);
    if (refused) throw refused;
    return result;
  }
}
