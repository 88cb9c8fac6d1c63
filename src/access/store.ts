/**
 * An answer as a shared store holds it: the JSON value the service gave, and how old it is by the
 * store's own clock (so instances whose clocks disagree still agree on its age).
 */
export interface SharedAccessAnswer {
  /** The answer (a boolean or an `AccountStatus`), as JSON would carry it. */
  value: unknown;
  /** Milliseconds since the answer was fetched from the service. */
  ageMs: number;
  /** How long, from when it was fetched, the answer is fresh (the cache's `ttlMs` or `denyTtlMs`). */
  ttlMs: number;
}

/** What {@link AccessStore.read} found, in one atomic step. */
export interface AccessStoreRead {
  /** The shared answer, when the store still holds one (fresh or not: compare `ageMs` to `ttlMs`). */
  answer?: SharedAccessAnswer | undefined;
  /** The account's generation when read; {@link AccessStore.write} stores only if it is unchanged. */
  generation: string;
  /**
   * True when this caller now holds the key's lease: no fresh answer was there and no other instance
   * was asking the service, so this one asks and then writes (or releases). False with no fresh
   * answer: another instance is asking; read again later.
   */
  leased: boolean;
}

/**
 * Where instances of one service share access answers, one request to the service per key at a time
 * across all of them, and invalidations (`redisAccessStore` from `billing-sdk/redis`). Every method
 * is one atomic step in the store. A method that rejects (the store is down or slow) never fails a
 * lookup: the cache tells `onError` and goes on with its own memory and the service.
 */
export interface AccessStore {
  /**
   * The key's answer and its account's generation; takes the key's lease for `leaseMs` when there is
   * no fresh answer and nobody holds the lease.
   */
  read(key: string, account: string, leaseMs: number): Promise<AccessStoreRead>;
  /**
   * Stores `value` for `lifeMs` (fresh for `ttlMs` of it) and gives up the lease, only if the
   * account's generation is still `generation`. Resolves false when an invalidation came between
   * (nothing stored).
   */
  write(
    key: string,
    account: string,
    generation: string,
    value: unknown,
    ttlMs: number,
    lifeMs: number,
  ): Promise<boolean>;
  /** Gives up the key's lease without an answer (the service failed), so another instance may ask. */
  release(key: string): Promise<void>;
  /**
   * Moves the account to a new generation, drops its answers and tells every instance watching;
   * resolves once every later {@link read} anywhere sees the new generation.
   */
  invalidate(account: string): Promise<void>;
  /**
   * Calls `listener` with each account another instance (or this one) invalidated, or with
   * `undefined` when some invalidations may have been missed (then every local answer must go).
   * Failures to watch go to `onError`. Returns a function that stops watching.
   */
  watch(listener: (account: string | undefined) => void, onError: (error: unknown) => void): () => void;
  /**
   * Optional: this store for the service one client talks to. `createAccessCache` calls it once,
   * with a digest of its client's API key and base URL (never the key), and uses what it returns,
   * so clients of different services (a sandbox key and a live one, two base URLs) sharing one
   * store never see each other's answers. `redisAccessStore` puts the digest in its keys. A
   * wrapper that spreads a store (`{ ...store, watch }`) must define `forService` too, wrapping
   * what the inner store's returns: the spread one alone gives the cache the inner store, unwrapped.
   */
  forService?(service: string): AccessStore;
}
