import { type BillingClient, serviceOf } from '../client.js';
import type { CreditsEvent } from '../core/diagnostics.js';
import {
  APIUserAbortError,
  InvalidRequestError,
  type RequestContext,
  SettleRefusedError,
  StoreError,
} from '../core/errors/index.js';
import type { RequestOptions } from '../core/options.js';
import { check, checkOptions, func, integer, type Rule, required, text } from '../internal/checks.js';
import { requestRules } from '../internal/options.js';
import { meterRules } from '../resources/usage.js';
import { type Clock, clockOf } from '../util/clock.js';
import { channel, publish } from '../util/diagnostics.js';
import { safely } from '../util/safely.js';
import { untilSignal } from '../util/signals.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { randomUUID } from '../util/uuid.js';
import { Hold, type HoldHome } from './hold.js';
import { memoryHoldStore } from './memory-store.js';
import { type HoldLedger, type HoldStore, ledgerKey } from './store.js';
import type {
  CreditHoldStats,
  CreditHolds,
  CreditHoldsOptions,
  ReserveParams,
  ReserveResult,
} from './types.js';

const creditsChannel = /* @__PURE__ */ channel('billing-sdk:credits');
/** Publishes one step on `billing-sdk:credits` (nothing is built without a subscriber). */
export const tellCredits = (event: CreditsEvent['event'], detail: Omit<CreditsEvent, 'event'> = {}): void =>
  publish(creditsChannel, (): CreditsEvent => ({ event, ...detail }));

/** A duration a timer can wait: an integer of ms, 1 to 2^31 − 1. */
const durationMs: Rule = integer(1, MAX_TIMER_MS);

const optionRules = {
  store: [
    (v) =>
      ['reserve', 'setBalance', 'settle', 'release', 'extend', 'invalidate'].every(
        (m) => typeof (v as Record<string, unknown>)[m] === 'function',
      )
        ? undefined
        : 'must be a HoldStore (memoryHoldStore, redisHoldStore, postgresHoldStore)',
  ],
  ttlMs: [durationMs],
  balanceTtlMs: [durationMs],
  onError: [func],
} satisfies Record<keyof CreditHoldsOptions, Rule[]>;

const reserveRules = {
  ...meterRules,
  quantity: [required, integer(1)],
  ttlMs: [durationMs],
  event_key: [text],
} satisfies Record<keyof ReserveParams, readonly Rule[]>;

/** What a reservation whose caller aborted while the balance was read names. */
const READ: RequestContext = { operation: 'holds.reserve', method: 'GET', path: 'usage/credits/balance/' };

/**
 * A reservation that found the balance stale again after each of this many reads (the account
 * invalidated meanwhile each time, or a `balanceTtlMs` shorter than a read) gives up rather than loop.
 */
const MAX_READS = 3;

/**
 * Prepaid-credit holds: reserve the most an action may cost before it runs, settle what it used
 * after (one debit, under a key the hold fixes), or release it. A reservation is granted, atomically
 * in the store shared by every instance, only while the account's balance minus every unexpired hold
 * covers it: concurrent actions of one account never together spend more than it has.
 *
 * @param billing - The client that reads balances and debits (its retries, timeouts and cooldown apply).
 * @param options - See {@link CreditHoldsOptions}.
 * @throws {@link InvalidRequestError} when an option is invalid.
 * @example
 * ```ts
 * import { BillingClient, createCreditHolds } from 'billing-sdk';
 *
 * const holds = createCreditHolds(new BillingClient());
 * const r = await holds.reserve({ account_ref_id: 'acct_1', product_code: 'ai-assistant', meter_code: 'credits', quantity: 2_000 });
 * if (r.approved) await r.hold.settle(1_234); // debits 1 234, frees the rest
 * ```
 */
export function createCreditHolds(billing: BillingClient, options: CreditHoldsOptions = {}): CreditHolds {
  if (typeof (billing as Partial<BillingClient> | null)?.usage?.debit !== 'function') {
    throw new InvalidRequestError('createCreditHolds', [
      { field: 'billing', message: 'must be a BillingClient' },
    ]);
  }
  checkOptions('createCreditHolds', options, optionRules);
  return new Holds(billing, options);
}

class Holds implements CreditHolds, HoldHome {
  readonly billing: BillingClient;
  readonly store: HoldStore;
  readonly clock: Clock;
  readonly #ttlMs: number;
  readonly #balanceTtlMs: number;
  readonly #onError: ((error: unknown) => void) | undefined;
  /**
   * The service the client talks to (a digest of its API key and base URL, never the key): every
   * account's ledgers are kept under it, so two clients sharing a store (live and sandbox, two
   * deployments) never count one's balance or holds for the other.
   */
  readonly #service: string;
  /** Balance reads in flight, by ledger: concurrent reservations of one ledger share one read. */
  readonly #reading = new Map<string, Promise<void>>();
  readonly #counts = {
    reserved: 0,
    refused: 0,
    settled: 0,
    unpaid: 0,
    released: 0,
    expired: 0,
    balanceReads: 0,
    open: 0,
  };

  constructor(billing: BillingClient, options: CreditHoldsOptions) {
    this.billing = billing;
    this.store = options.store ?? memoryHoldStore();
    this.clock = clockOf(options);
    this.#ttlMs = options.ttlMs ?? 60_000;
    this.#balanceTtlMs = options.balanceTtlMs ?? 30_000;
    this.#onError = options.onError;
    this.#service = serviceOf(billing);
  }

  async reserve(params: ReserveParams, options?: RequestOptions): Promise<ReserveResult> {
    const p = check('holds.reserve', params, reserveRules) as unknown as ReserveParams;
    // Checked now, as the client would: a read may not be needed, and a bad option must not pass then.
    checkOptions('holds.reserve', options, requestRules);
    const ledger: HoldLedger = { account: p.account_ref_id, product: p.product_code, meter: p.meter_code };
    const stored = this.stored(ledger);
    const id = randomUUID();
    const request = { id, quantity: p.quantity, ttlMs: p.ttlMs ?? this.#ttlMs };
    for (let reads = 0; ; reads++) {
      const r = await this.store.reserve(stored, request, this.#balanceTtlMs);
      if (r.expired > 0) {
        this.#counts.expired += r.expired;
        tellCredits('expire', { count: r.expired });
      }
      if (r.status === 'granted') {
        this.#counts.reserved++;
        this.#counts.open++;
        tellCredits('reserve', { quantity: p.quantity });
        const hold = new Hold(
          this,
          ledger,
          stored,
          id,
          p.event_key ?? `hold_${id}`,
          p.quantity,
          request.ttlMs,
        );
        return { approved: true, hold, available: r.available };
      }
      if (r.status === 'refused') {
        this.#counts.refused++;
        tellCredits('refuse', { quantity: p.quantity });
        return { approved: false, error_code: 'insufficient_credits', available: r.available };
      }
      if (r.status !== 'stale')
        throw new StoreError('unexpected_reply', 'holds.reserve: the store answered no status');
      if (reads === MAX_READS) {
        throw new StoreError(
          'unavailable',
          `holds.reserve: the balance was stale again after each of ${MAX_READS} reads (invalidated meanwhile, or balanceTtlMs shorter than a read)`,
        );
      }
      await this.#read(ledger, stored, r.fence, options?.signal);
    }
  }

  async invalidate(account_ref_id: string): Promise<void> {
    check('holds.invalidate', { account_ref_id }, { account_ref_id: [required, text] });
    await this.store.invalidate(this.#storedAccount(account_ref_id));
  }

  stats(): CreditHoldStats {
    return { ...this.#counts };
  }

  /**
   * Reads the ledger's balance from the service into the store; one read per ledger at a time,
   * shared by every reservation that needs it. The read is made with the client's own settings,
   * none of one caller's (its signal aborting, or its timeout, would fail the others' reservations);
   * each caller stops waiting when its own `signal` aborts, the read going on for the rest.
   */
  #read(
    ledger: HoldLedger,
    stored: HoldLedger,
    fence: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const aborted = () => new APIUserAbortError(READ, { cause: signal?.reason });
    if (signal?.aborted) return Promise.reject(aborted());
    const key = ledgerKey(stored);
    let reading = this.#reading.get(key);
    if (!reading) {
      reading = (async () => {
        const { balance } = await this.billing.usage.balance({
          account_ref_id: ledger.account,
          product_code: ledger.product,
          meter_code: ledger.meter,
        });
        this.#counts.balanceReads++;
        tellCredits('balance');
        await this.store.setBalance(stored, balance, fence);
      })().finally(() => this.#reading.delete(key));
      this.#reading.set(key, reading);
    }
    return signal ? untilSignal(reading, signal, aborted) : reading;
  }

  // HoldHome: what a hold reports back.
  stored(ledger: HoldLedger): HoldLedger {
    return { ...ledger, account: this.#storedAccount(ledger.account) };
  }

  /** An account as the store keeps it: under the client's service (the digest has no `:`). */
  #storedAccount(account: string): string {
    return `${this.#service}:${account}`;
  }

  freed(kind: 'settled' | 'unpaid' | 'released', quantity: number): void {
    this.#counts[kind]++;
    this.#counts.open--;
    if (kind === 'released') tellCredits('release');
    else tellCredits(kind === 'settled' ? 'settle' : 'unpaid', { quantity });
  }

  report(error: unknown): void {
    if (!(error instanceof SettleRefusedError)) tellCredits('error');
    void safely(() => this.#onError?.(error));
  }
}
