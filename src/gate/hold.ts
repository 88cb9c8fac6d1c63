import { InvalidRequestError } from '../core/errors/index.js';
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
  /** Under `gate.check`: no adapter settles this hold, so `use` would be heard by nobody. */
  #leftToCaller = false;

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

  /** Made by `gate.check`: the caller settles the hold itself (`use` throws). */
  leaveToCaller(): void {
    this.#leftToCaller = true;
  }

  /** After the answer: settle what was used when it succeeded, else release. */
  close(succeeded: boolean): Promise<unknown> {
    return succeeded ? this.credit.settle(this.#used ?? this.credit.quantity) : this.credit.release();
  }
}
