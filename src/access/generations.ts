/**
 * The generation of each account, part of every cache key: an invalidation moves the account to a
 * new generation, so its old answers can never be found again, and a request that started before
 * stores its answer under the old key, where no later lookup looks. That is how invalidation wins
 * every race without tracking requests in flight.
 *
 * Only invalidated accounts are listed; the others share the `floor` generation. The table is
 * bounded: when it grows past `limit`, it starts over on a new floor, which moves every account to
 * a new generation at once (all answers go cold): correct, and rare (`limit` invalidated accounts
 * between two resets).
 */
export class Generations {
  readonly #byAccount = new Map<string, number>();
  readonly #limit: number;
  /** Told of each move: an account, or `undefined` for all of them. */
  readonly #moved: (account: string | undefined) => void;
  /** Every generation ever handed out is below this: a new one is always new. */
  #next = 1;
  #floor = 0;

  constructor(limit: number, moved: (account: string | undefined) => void = () => {}) {
    this.#limit = limit;
    this.#moved = moved;
  }

  /** The account's current generation. */
  of(account: string): number {
    return this.#byAccount.get(account) ?? this.#floor;
  }

  /** Moves one account to a new generation. */
  bump(account: string): void {
    if (this.#byAccount.size >= this.#limit) {
      this.bumpAll();
      return;
    }
    this.#byAccount.set(account, this.#next++);
    this.#moved(account);
  }

  /** Moves every account to a new generation (invalidations may have been missed). */
  bumpAll(): void {
    this.#byAccount.clear();
    this.#floor = this.#next++;
    this.#moved(undefined);
  }
}
