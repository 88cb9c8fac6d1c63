import { attemptTimeoutOf, type BillingClient, serviceOf } from '../client.js';
import type { AccessEvent } from '../core/diagnostics.js';
import { InvalidRequestError } from '../core/errors/index.js';
import { check, isPlainObject, type Rule, text } from '../internal/checks.js';
import { warmRequestPath } from '../platform/server.js';
import type { AccountStatusParams } from '../resources/accounts.js';
import type { EntitlementCheckParams } from '../resources/entitlements.js';
import type { AccountStatus } from '../schemas/account-status.js';
import { tellAccount } from '../util/account-changes.js';
import { type Clock, clockOf } from '../util/clock.js';
import { channel, publish } from '../util/diagnostics.js';
import { scopedTo } from '../util/service-namespace.js';
import { untilSignal } from '../util/signals.js';
import { AnswerTable, type Slot } from './answer-table.js';
import {
  type Answer,
  type Asking,
  type Entry,
  fromShared,
  type Given,
  isDenial,
  type Question,
  toShared,
} from './answers.js';
import { abortedError, closedError } from './errors.js';
import { Generations } from './generations.js';
import { lookupOptionsOf } from './lookup-options.js';
import { LOOKUPS, type LookupSpec, passes, STAND_IN } from './lookups.js';
import { type AccessCacheOptions, type ResolvedAccessOptions, resolveAccessOptions } from './options.js';

import type {
  AccessCache,
  AccessCacheStats,
  AccessLookupOptions,
  AccessLookupOutcome,
  AccessLookups,
  PreparedAccessLookup,
} from './types.js';

export type {
  AccessAnswerSource,
  AccessCache,
  AccessCacheStats,
  AccessLookupOptions,
  AccessLookupOutcome,
  AccessLookups,
  PreparedAccessLookup,
} from './types.js';

/** Where the cache's steps are published (see core/diagnostics.ts); `undefined` in browsers. */
const accessChannel = /* @__PURE__ */ channel('billing-sdk:access');
const tell = (event: AccessEvent['event'], operation?: AccessEvent['operation']): void => {
  // Checked before the event's maker is made: every lookup tells, and nobody listens in most apps.
  if (accessChannel?.hasSubscribers) publishStep(event, operation);
};
const publishStep = (event: AccessEvent['event'], operation?: AccessEvent['operation']): void =>
  publish(accessChannel, (): AccessEvent => (operation ? { event, operation } : { event }));

/** How often an instance looks whether another one's request for the same answer is done. */
const SHARED_POLL_MS = 10;
/**
 * After a store failure, lookups leave the store alone this long: an outage then costs one store
 * timeout per second, not one per lookup.
 */
const STORE_PAUSE_MS = 1_000;

/**
 * Caches access answers so that gating a feature costs microseconds instead of a round trip. An
 * answer is reused for `ttlMs` (`denyTtlMs` for a "no"); past that and younger than `staleMs` it is
 * served at once while one background request refreshes it, and it stands in when the service
 * fails. Concurrent lookups of one answer share one request (across instances with a `store`). The
 * webhook handlers take the cache as `access` and invalidate the event's account before `onEvent`.
 *
 * @param billing - The client that asks the service (its retries, timeouts and cooldown apply).
 * @param options - See {@link AccessCacheOptions}.
 * @throws {@link InvalidRequestError} when an option is invalid.
 * @example
 * ```ts
 * import { BillingClient, createAccessCache } from 'billing-sdk';
 *
 * const billing = new BillingClient();
 * const access = createAccessCache(billing, { ttlMs: 30_000, denyTtlMs: 5_000 });
 * if (!(await access.isActive({ account_ref_id: 'acct_1' }))) {
 *   // send the user to the paywall
 * }
 * ```
 */
export function createAccessCache(billing: BillingClient, options: AccessCacheOptions = {}): AccessCache {
  if (typeof (billing as Partial<BillingClient> | null)?.accounts?.status !== 'function') {
    throw new InvalidRequestError('createAccessCache', [
      { field: 'billing', message: 'must be a BillingClient' },
    ]);
  }
  const o = resolveAccessOptions(options);
  // A shared store keeps this client's answers apart from another service's (key, base URL).
  if (o.store) o.store = scopedTo(o.store, serviceOf(billing));
  const clock: Clock = clockOf(options);
  return new Cache(billing, o, clock);
}

class Cache implements AccessCache {
  readonly #billing: BillingClient;
  readonly #o: ResolvedAccessOptions;
  readonly #clock: Clock;
  readonly #generations: Generations;
  readonly #table: AnswerTable<Entry>;
  /** Aborts requests in flight on close (never a caller's signal: requests are shared). */
  readonly #steps = new Set<AbortController>();
  readonly #counts = { hits: 0, misses: 0, stale: 0, refreshes: 0, invalidations: 0 };
  readonly #unwatch: () => void;
  #closed = false;
  /** Until when lookups skip the store after it failed (the cache's clock). */
  #storePausedUntil = 0;
  /** The client's request path loading ahead of this instance's first request (see #shared). */
  #warming: Promise<void> | undefined;

  constructor(billing: BillingClient, o: ResolvedAccessOptions, clock: Clock) {
    this.#billing = billing;
    this.#o = o;
    this.#clock = clock;
    this.#table = new AnswerTable(o.maxEntries);
    // Each move of an account (invalidated here or through the store) reaches gate.state's streams.
    this.#generations = new Generations(Math.max(o.maxEntries, 10_000), (a) => tellAccount(this, a));
    this.#unwatch = o.store
      ? o.store.watch(
          (account) =>
            account === undefined ? this.#generations.bumpAll() : this.#generations.bump(account),
          o.onError,
        )
      : () => {};
  }

  // Each method is #lookup itself, reading its answer with its spec's `read`: an async method
  // awaiting it would add a promise and a turn of the microtask queue to every lookup.
  isActive(params: AccountStatusParams, options?: AccessLookupOptions): Promise<boolean> {
    return this.#lookup(LOOKUPS.isActive, params, options) as Promise<boolean>;
  }

  status(params: AccountStatusParams, options?: AccessLookupOptions): Promise<AccountStatus> {
    return this.#lookup(LOOKUPS.status, params, options) as Promise<AccountStatus>;
  }

  hasEntitlement(params: EntitlementCheckParams, options?: AccessLookupOptions): Promise<boolean> {
    return this.#lookup(LOOKUPS.hasEntitlement, params, options) as Promise<boolean>;
  }

  prepare<K extends keyof AccessLookups>(
    lookup: K,
    params: AccessLookups[K]['params'],
    options?: AccessLookupOptions,
  ): PreparedAccessLookup<AccessLookups[K]['answer']> {
    const spec = (LOOKUPS as Partial<Record<string, LookupSpec>>)[lookup as string];
    if (!spec || !Object.hasOwn(LOOKUPS, lookup)) {
      throw new InvalidRequestError('access.prepare', [
        { field: 'lookup', message: `must be one of ${Object.keys(LOOKUPS).join(', ')}` },
      ]);
    }
    const { operation, endpoint, read } = spec;
    if (isPlainObject(params) && 'account_ref_id' in params) {
      throw new InvalidRequestError(operation, [
        { field: 'account_ref_id', message: 'is given to the prepared lookup on each call, not here' },
      ]);
    }
    // The parameters as the unprepared lookup checks them, with a stand-in for the account (which
    // every rule takes): its own rules run on each call.
    const checked = check(
      operation,
      isPlainObject(params) ? { ...params, account_ref_id: STAND_IN } : params,
      endpoint.rules,
      endpoint.cross,
    );
    const base = lookupOptionsOf(operation, options);
    const ask = spec.prepared(checked);
    const accountRules = endpoint.rules.account_ref_id as Rule[];
    const lookupOf = (account_ref_id: string, given?: AccessLookupOptions): Promise<unknown> => {
      if (
        typeof account_ref_id !== 'string' ||
        account_ref_id === '' ||
        !passes(accountRules, account_ref_id)
      ) {
        // The unprepared lookup's own refusal, word for word.
        return this.#lookup(spec, { ...checked, account_ref_id }, given ?? options);
      }
      let call: AccessLookupOptions;
      try {
        call = lookupOptionsOf(operation, given);
      } catch (error) {
        return Promise.reject(error);
      }
      return this.#answer(
        operation,
        ask,
        account_ref_id,
        call.signal ?? base.signal,
        call.outcome ?? base.outcome,
        read,
      );
    };
    return lookupOf as PreparedAccessLookup<AccessLookups[K]['answer']>;
  }

  async invalidate(account_ref_id: string): Promise<void> {
    check('access.invalidate', { account_ref_id }, { account_ref_id: [text] });
    this.#counts.invalidations++;
    this.#generations.bump(account_ref_id);
    tell('invalidate');
    if (!this.#o.store) return;
    try {
      await this.#o.store.invalidate(account_ref_id);
    } catch (error) {
      // Dropped here, not on the other instances, which keep their answers up to their ttl: the
      // caller must hear it (a webhook receiver answers 5xx so the sender delivers again).
      this.#generations.bump(account_ref_id);
      this.#o.onError(error);
      throw error;
    }
    // Again: a lookup made while the store was invalidating may have read an answer from before.
    this.#generations.bump(account_ref_id);
  }

  stats(): AccessCacheStats {
    return { ...this.#counts, entries: this.#table.size };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unwatch();
    for (const step of this.#steps) step.abort();
    this.#table.clear();
  }

  /**
   * One lookup: checked, from memory when it can be, else through one shared request (#refresh);
   * the answer as `read` gives it (a throw there rejects).
   */
  #lookup(spec: LookupSpec, params: unknown, options: AccessLookupOptions | undefined): Promise<unknown> {
    const { operation, endpoint } = spec;
    let q: Question & Asking;
    let signal: AbortSignal | undefined;
    let outcome: AccessLookupOutcome | undefined;
    try {
      const checked = check(operation, params, endpoint.rules, endpoint.cross);
      ({ signal, outcome } = lookupOptionsOf(operation, options));
      q = spec.question(checked);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#answer(operation, q, q.account, signal, outcome, spec.read);
  }

  /**
   * One checked lookup's answer: from memory when it can be, else through #refresh (the question
   * itself is made only then).
   */
  async #answer<T>(
    operation: string,
    asking: Asking,
    account: string,
    signal: AbortSignal | undefined,
    outcome: AccessLookupOutcome | undefined,
    read: (answer: Answer) => T,
  ): Promise<T> {
    if (this.#closed) throw closedError(operation);
    // Before anything is sent, as the client does.
    if (signal?.aborted) throw abortedError(operation, signal);
    const gen = this.#generations.of(account);
    const now = this.#clock.now();
    let slot = this.#table.get(asking.head, account);
    // An answer of an earlier generation (an invalidation since) is never served.
    const held = slot?.gen === gen ? slot.entry : undefined;
    if (held !== undefined && now <= held.expires) {
      (slot as Slot<Entry>).used = true;
      this.#counts.hits++;
      tell('hit', asking.operation);
      if (outcome) outcome.source = 'cache';
      return read(held.answer);
    }
    // Every lookup a slot answers marks it used, a waiting one too; the lookup that adds a slot is
    // its first, not a read again (answer-table.ts).
    if (slot === undefined) slot = this.#table.add(asking.head, account, gen);
    else slot.used = true;
    if (slot.gen !== gen) {
      // The answer and the refresh of before the invalidation are left to those who asked then.
      slot.gen = gen;
      slot.entry = undefined;
      slot.pending = undefined;
    }
    // Past staleMs an answer is never served, not even while its refresh runs.
    const usable = held !== undefined && now - held.at < this.#o.staleMs;
    // A "no" past its ttl waits for the fresh answer (a customer who just paid gets in at once);
    // it stands in only when that answer fails (the service is down). A "yes" is served at once.
    const denial = usable && isDenial(held.answer);
    // Only an answer still usable is stale behind its refresh: its failure is then the background's.
    const stale = usable ? held : undefined;
    const pending = slot.pending ?? this.#table.fill(slot, this.#refresh(asking.question(account), stale));
    if (usable && !denial) {
      this.#counts.stale++;
      tell('stale', asking.operation);
      if (outcome) outcome.source = 'stale';
      return read(held.answer);
    }
    this.#counts.misses++;
    tell('miss', asking.operation);
    // close() aborted the refresh: the lookup is closed, not answered by the held "no"; nor is it
    // once the "no" grew older than staleMs while the refresh ran.
    const answered = denial
      ? pending.catch((error: unknown) => {
          if (this.#closed || this.#clock.now() - held.at >= this.#o.staleMs) throw error;
          return held;
        })
      : pending;
    let entry: Entry;
    try {
      entry = await (signal
        ? untilSignal(answered, signal, () => abortedError(operation, signal))
        : answered);
    } catch (error) {
      throw this.#closed ? closedError(operation) : error;
    }
    // The held "no" given back because its refresh failed is stale too.
    if (outcome) outcome.source = entry === held ? 'stale' : 'live';
    return read(entry.answer);
  }

  /** Fills or refreshes one answer: the table runs one per slot at a time (single-flight). */
  async #refresh(q: Question, stale: Entry | undefined): Promise<Entry> {
    this.#counts.refreshes++;
    tell('refresh', q.operation);
    try {
      const shared = this.#o.store && this.#clock.now() >= this.#storePausedUntil;
      const got = shared ? await this.#shared(q) : await this.#ask(q);
      const ttl = isDenial(got.answer) ? this.#o.denyTtlMs : this.#o.ttlMs;
      // Fresh for its ttl from when the service gave it (a shared store's answer may be older).
      return { answer: got.answer, at: got.at, expires: Math.max(this.#clock.now() + 1, got.at + ttl) };
    } catch (error) {
      tell('error', q.operation);
      // Lookups that waited get the error; one that was served the old answer never sees it. A
      // refresh that close() aborted is no failure.
      if (stale !== undefined && !this.#closed) this.#o.onError(error);
      throw error;
    }
  }

  async #ask(q: Question): Promise<Given> {
    const answer = await this.#abortable((signal) => q.ask(this.#billing, signal));
    return { answer, at: this.#clock.now() };
  }

  /**
   * Runs a request or a wait under a signal that `close()` aborts. One signal per step, made where
   * the step starts: workerd ties an AbortSignal to the request that made it, so a signal made
   * for an earlier request (or at start-up) could not serve a later one.
   */
  async #abortable<T>(step: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    if (this.#closed) controller.abort();
    this.#steps.add(controller);
    try {
      return await step(controller.signal);
    } finally {
      this.#steps.delete(controller);
    }
  }

  /**
   * The shared store's answer when it has a fresh one; else this instance asks the service if it
   * gets the key's lease, or waits for the instance that has it, at most as long as one attempt of
   * its own would take. The store failing never fails the lookup: the service is asked.
   */
  async #shared(q: Question): Promise<Given> {
    const store = this.#o.store as NonNullable<ResolvedAccessOptions['store']>;
    const leaseMs = attemptTimeoutOf(this.#billing);
    // The store may answer this instance for long; its first request may then come after an
    // invalidation, every instance waiting for it: what that request would load (ky, undici: tens of
    // ms on 2 cores) is loaded now, in the background (issue 28: 125–300 ms to see an invalidation).
    this.#warming ??= warmRequestPath().catch(() => {});
    const deadline = this.#clock.now() + leaseMs;
    for (;;) {
      let read: Awaited<ReturnType<typeof store.read>>;
      try {
        read = await store.read(q.key, q.account, leaseMs);
      } catch (error) {
        this.#storePausedUntil = this.#clock.now() + STORE_PAUSE_MS;
        tell('error', q.operation);
        this.#o.onError(error);
        return this.#ask(q);
      }
      const shared = read.answer && fromShared(read.answer.value);
      if (shared && read.answer && read.answer.ageMs < read.answer.ttlMs) {
        return { answer: shared, at: this.#clock.now() - read.answer.ageMs };
      }
      if (read.leased) {
        let entry: Given;
        try {
          entry = await this.#ask(q);
        } catch (error) {
          store.release(q.key).catch(this.#o.onError);
          throw error;
        }
        const ttl = isDenial(entry.answer) ? this.#o.denyTtlMs : this.#o.ttlMs;
        // Not awaited: this instance's callers need not wait for the others' copy.
        store
          .write(q.key, q.account, read.generation, toShared(entry.answer), ttl, this.#o.staleMs)
          .catch(this.#o.onError);
        return entry;
      }
      if (this.#clock.now() >= deadline) return this.#ask(q);
      await this.#abortable((signal) =>
        this.#clock.sleep(SHARED_POLL_MS, signal, () => closedError('access')),
      );
    }
  }
}
