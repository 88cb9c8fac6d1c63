/**
 * One kept answer's place: the answer to one question (its `head`) for one account, in one of the
 * account's generations, and the one request refreshing it (the single-flight).
 */
export interface Slot<E> {
  readonly head: string;
  readonly account: string;
  /** The account's generation the answer and the refresh belong to (see generations.ts). */
  gen: number;
  entry: E | undefined;
  /** The refresh under way for this generation, if any: every lookup in between shares it. */
  pending: Promise<E> | undefined;
  /** Used since the eviction last went past it (set by each lookup it answers). */
  used: boolean;
  /** Dropped from the table (evicted, or the table cleared): a refresh no longer stores here. */
  gone: boolean;
}

/**
 * The access cache's answers, by question and then by account, at most `max` of them: past that,
 * one not used since the last eviction went round is dropped (CLOCK, the usual approximation of
 * least recently used: a use sets a flag instead of moving the slot). Two plain maps and an
 * ordered set rather than a general LRU library: a lookup answered from memory is two `Map.get`s
 * of strings whose hashes V8 keeps (the question's, made once per route, and the request's
 * account) and one write, where lru-cache's `get` of a key built per lookup cost about 1.5 µs of
 * a gated request inside an Express app (issue 41, `npm run bench -- --gate`).
 */
export class AnswerTable<E> {
  readonly #shelves = new Map<string, Map<string, Slot<E>>>();
  /** Every slot, in the order the eviction goes round (a `Set` keeps insertion order). */
  readonly #order = new Set<Slot<E>>();
  readonly #max: number;

  /** @param max - The most slots kept (the cache's `maxEntries`). */
  constructor(max: number) {
    this.#max = max;
  }

  /** How many slots are kept (an answer, or a first request under way). */
  get size(): number {
    return this.#order.size;
  }

  /** The slot of `head` and `account`, if kept. */
  get(head: string, account: string): Slot<E> | undefined {
    return this.#shelves.get(head)?.get(account);
  }

  /** The slot of `head` and `account` in generation `gen`, made (and one dropped past max) when absent. */
  add(head: string, account: string, gen: number): Slot<E> {
    // Room first: the slot added is never the one dropped.
    if (this.#order.size >= this.#max) this.#evict();
    let shelf = this.#shelves.get(head);
    if (shelf === undefined) {
      shelf = new Map();
      this.#shelves.set(head, shelf);
    }
    // Unused until read again (as SIEVE's new objects): a slot read since it was added outlives
    // one that was not, whichever came first. Had it started used, the first round would clear
    // every flag and drop the oldest slot, read just before or not.
    const slot: Slot<E> = {
      head,
      account,
      gen,
      entry: undefined,
      pending: undefined,
      used: false,
      gone: false,
    };
    shelf.set(account, slot);
    this.#order.add(slot);
    return slot;
  }

  /** Drops the first slot not used since the eviction last passed it; the used ones go round again. */
  #evict(): void {
    // A Set's iterator sees the slots added behind it: every slot is passed at most twice.
    for (const slot of this.#order) {
      this.#order.delete(slot);
      if (!slot.used) {
        this.#forget(slot);
        return;
      }
      slot.used = false;
      this.#order.add(slot);
    }
  }

  /**
   * Makes `refresh` the slot's one refresh, which every lookup until it settles shares: its answer
   * is kept unless the slot moved on meanwhile (an invalidation, an eviction); a first request that
   * fails leaves nothing (an error is never cached), a refresh that fails keeps the old answer.
   */
  fill(slot: Slot<E>, refresh: Promise<E>): Promise<E> {
    const pending: Promise<E> = refresh.then(
      (entry) => {
        if (slot.pending === pending) {
          slot.pending = undefined;
          slot.entry = entry;
        }
        return entry;
      },
      (error: unknown) => {
        if (slot.pending === pending) {
          slot.pending = undefined;
          if (slot.entry === undefined) this.drop(slot);
        }
        throw error;
      },
    );
    slot.pending = pending;
    // A refresh behind a stale answer has nobody waiting: its failure is the cache's to report.
    pending.catch(() => {});
    return pending;
  }

  /** Forgets `slot` (its refresh, if one runs, still answers the lookups waiting on it). */
  drop(slot: Slot<E>): void {
    if (slot.gone) return;
    this.#order.delete(slot);
    this.#forget(slot);
  }

  #forget(slot: Slot<E>): void {
    slot.gone = true;
    const shelf = this.#shelves.get(slot.head);
    if (shelf?.get(slot.account) !== slot) return;
    shelf.delete(slot.account);
    // A question nobody asks any more leaves nothing behind: the table stays within `max` slots.
    if (shelf.size === 0) this.#shelves.delete(slot.head);
  }

  /** Forgets every slot. */
  clear(): void {
    for (const slot of this.#order) slot.gone = true;
    this.#order.clear();
    this.#shelves.clear();
  }
}
