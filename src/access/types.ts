import type { AccountStatusParams } from '../resources/accounts.js';
import type { EntitlementCheckParams } from '../resources/entitlements.js';
import type { AccountStatus } from '../schemas/account-status.js';

/**
 * Where a lookup's answer came from: memory within its ttl (`'cache'`), memory past it while one
 * request refreshes it (`'stale'`), or a request to the service or the shared store (`'live'`).
 */
export type AccessAnswerSource = 'cache' | 'stale' | 'live';

/** What a lookup tells the caller who passed {@link AccessLookupOptions.outcome}. */
export interface AccessLookupOutcome {
  /** Where the answer came from; set once the lookup answered, left unset when it rejected. */
  source?: AccessAnswerSource | undefined;
}

/** Options of one lookup. */
export interface AccessLookupOptions {
  /**
   * Stops this caller's wait (it rejects with `APIUserAbortError`); a request other lookups share
   * goes on for them.
   */
  signal?: AbortSignal | undefined;
  /**
   * An object of yours the lookup fills when it answers: `source`
   * says where the answer came from (for a metric, a response header, or `createGate`'s
   * `source`). Left as it was when the lookup rejects.
   */
  outcome?: AccessLookupOutcome | undefined;
}

/** The lookups {@link AccessCache.prepare} prepares, by name. */
export interface AccessLookups {
  /** {@link AccessCache.isActive}. */
  isActive: {
    /** Its parameters but the account. */
    params: Omit<AccountStatusParams, 'account_ref_id'>;
    /** What it answers. */
    answer: boolean;
  };
  /** {@link AccessCache.status}. */
  status: {
    /** Its parameters but the account. */
    params: Omit<AccountStatusParams, 'account_ref_id'>;
    /** What it answers. */
    answer: AccountStatus;
  };
  /** {@link AccessCache.hasEntitlement}. */
  hasEntitlement: {
    /** Its parameters but the account. */
    params: Omit<EntitlementCheckParams, 'account_ref_id'>;
    /** What it answers. */
    answer: boolean;
  };
}

/**
 * A lookup prepared by {@link AccessCache.prepare}: the account is its one parameter, checked on
 * every call. `options`, when given, are checked on that call; each one given replaces the one
 * given to `prepare`.
 */
export type PreparedAccessLookup<T> = (account_ref_id: string, options?: AccessLookupOptions) => Promise<T>;

/** Counters since the cache was made, and its size now. */
export interface AccessCacheStats {
  /** Lookups answered from memory, fresh. */
  hits: number;
  /** Lookups that waited for the service (or the shared store). */
  misses: number;
  /** Lookups answered with an answer past its ttl (within `staleMs`) while it was refreshed. */
  stale: number;
  /** Requests made to the service or the shared store to fill or refresh an answer. */
  refreshes: number;
  /** Calls of `invalidate` (webhooks included). */
  invalidations: number;
  /** Answers held now (requests in flight included). */
  entries: number;
}

/**
 * Access answers without a round trip: `isActive`, `status` and `hasEntitlement` as the client
 * answers them, kept in memory (and, with a shared store, across instances), refreshed in the
 * background, dropped by `invalidate`. Made by {@link createAccessCache}.
 */
export interface AccessCache {
  /** As `billing.accounts.isActive` (same parameters and checks), from memory when it can be. */
  isActive(params: AccountStatusParams, options?: AccessLookupOptions): Promise<boolean>;
  /**
   * As `billing.accounts.status`, from memory when it can be: the service's documented not-found
   * answer is kept (for `denyTtlMs`) and thrown again as the same `NotFoundError`.
   */
  status(params: AccountStatusParams, options?: AccessLookupOptions): Promise<AccountStatus>;
  /**
   * `has_access` of `billing.entitlements.check` (same parameters and checks), from memory when it
   * can be; the documented not-found answer (unknown account) is `false`.
   */
  hasEntitlement(params: EntitlementCheckParams, options?: AccessLookupOptions): Promise<boolean>;
  /**
   * One of the three lookups with everything but the account fixed and checked now, once: for a
   * question asked again and again (a route's need), the parameters and options are not checked
   * again on every call. Each call answers exactly what the unprepared lookup answers for the same
   * parameters (its value, its error, its `outcome`), the account checked as it checks it.
   *
   * @param lookup - `'isActive'`, `'status'` or `'hasEntitlement'`.
   * @param params - That lookup's parameters without `account_ref_id`.
   * @param options - Options of every call (see {@link AccessLookupOptions}).
   * @throws {@link InvalidRequestError} when `lookup`, a parameter or an option is invalid, as the
   * unprepared lookup would reject (naming the same fields).
   * @example
   * ```ts
   * import { BillingClient, createAccessCache } from 'billing-sdk';
   *
   * const access = createAccessCache(new BillingClient());
   * const canExport = access.prepare('hasEntitlement', {
   *   product_code: 'ai-assistant',
   *   entitlement_code: 'export',
   * });
   * if (await canExport('acct_1')) {
   *   // serve the export
   * }
   * ```
   */
  prepare<K extends keyof AccessLookups>(
    lookup: K,
    params: AccessLookups[K]['params'],
    options?: AccessLookupOptions,
  ): PreparedAccessLookup<AccessLookups[K]['answer']>;
  /**
   * Drops every answer about the account, here and (with a shared store) on every instance; once
   * it resolves, no lookup here is answered from before it, and a request that was in flight never
   * stores its answer. When the shared store fails, the answers here are dropped all the same, the
   * failure goes to `onError`, and the call rejects with it (the store's `StoreError`): the other
   * instances keep their answers up to their ttl, so the caller must retry (the webhook handlers
   * answer 500 and the sender delivers again).
   */
  invalidate(account_ref_id: string): Promise<void>;
  /** Counters and size, for metrics. */
  stats(): AccessCacheStats;
  /** Stops watching the store and aborts requests in flight; later lookups reject. */
  close(): Promise<void>;
}
