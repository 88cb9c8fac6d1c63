import {
  BillingError,
  InsufficientCreditsError,
  InvalidRequestError,
  SettleRefusedError,
} from '../core/errors/index.js';
import { keepHold } from '../credits/keep.js';
import type { CreditHold } from '../credits/types.js';
import type { UsageWriteParams } from '../resources/usage.js';
import type { DebitResult } from '../schemas/usage.js';
import { safely } from '../util/safely.js';
import { anyTokens, costOf, estimateTokens, NO_USAGE } from './price.js';
import { leftOf, spendFrom, spendSoFar, takeFrom } from './route-hold.js';
import type {
  AICallInfo,
  AICallOptions,
  AIChargeEvent,
  AIChargeMode,
  AIErrorContext,
  AIMeterOptions,
  AIMeterStats,
  AIUsage,
} from './types.js';

/** What one call's charge needs of its meter. */
export interface MeterCore {
  readonly options: AIMeterOptions;
  readonly mode: AIChargeMode;
  readonly counts: AIMeterStats;
  track(event: UsageWriteParams): Promise<unknown>;
  reserve(info: AICallInfo, quantity: number): Promise<{ hold: CreditHold } | { available: number }>;
  report(error: BillingError, context: AIErrorContext): void;
  publish(event: AIChargeEvent): void;
}

/** What a wrap hands each call of its model or client: its charge (with a key of its own). */
export interface Calls {
  start(
    provider: AICallInfo['provider'],
    operation: string,
    model: string,
    stream: boolean,
    maxOutputTokens: number | undefined,
    input: () => number,
  ): Charge;
}

/** How a call ended, for its charge. */
export type CallEnd = AIChargeEvent['ended'];

/**
 * The one charging step of a call, whichever way it came in: before the provider, the most it may
 * cost is held (`'hold'`, or a gated route's hold) or refused with {@link InsufficientCreditsError};
 * after it, what it used is charged once, under the call's key ({@link end}), or nothing and the hold
 * freed ({@link fail}). A charge that fails is the meter's `onError`'s, never the caller's: the
 * provider's answer is the user's already.
 */
export class Charge {
  readonly info: AICallInfo;
  readonly #core: MeterCore;
  readonly #options: AICallOptions;
  /** The prompt's estimated tokens, read only when needed (a bound, an estimate). */
  readonly #estimate: () => number;
  #input: number | undefined;
  #hold: CreditHold | undefined;
  /** What this call took of a gated route's hold. */
  #taken = 0;
  #done: Promise<void> | undefined;
  /** Stops the keeping of the call's hold (aborted when the call is charged). */
  #keeping: AbortController | undefined;
  /** Whether the call is still under way at a beat of its hold's keeper (a stream says, see {@link keepWhile}). */
  #alive: () => boolean = () => true;
  /** Gives the call's key back to its wrap (nothing was charged under it); once at most. */
  #unused: (() => void) | undefined;

  constructor(
    core: MeterCore,
    info: AICallInfo,
    options: AICallOptions,
    input: () => number,
    unused?: () => void,
  ) {
    this.#core = core;
    this.info = info;
    this.#options = options;
    this.#estimate = input;
    this.#unused = unused;
  }

  /** Nothing was nor will be charged under the call's key: the wrap may give it to its next call. */
  #keyUnused(): void {
    const unused = this.#unused;
    this.#unused = undefined;
    unused?.();
  }

  /** The prompt's estimated tokens, walked once. */
  #inputTokens(): number {
    this.#input ??= this.#estimate();
    return this.#input;
  }

  /** The tokens the prompt is estimated to be. */
  estimatedInput(): number {
    return this.#inputTokens();
  }

  /**
   * Before the provider: holds what the call may cost where a hold is asked for (a promise when
   * that waits for the store, else nothing: the call goes on at once). Throws (or rejects with)
   * {@link InsufficientCreditsError} when it cannot be held, {@link InvalidRequestError} when the
   * call has no bound in `'hold'` mode: in either case nothing was sent.
   */
  begin(): Promise<void> | undefined {
    try {
      const ready = this.#begin();
      return ready?.catch((error: unknown) => {
        this.#keyUnused();
        throw error;
      });
    } catch (error) {
      this.#keyUnused();
      throw error;
    }
  }

  #begin(): Promise<void> | undefined {
    const route = this.#options.hold;
    if (route) {
      const bound = this.#bound(false);
      const taken = takeFrom(route, bound);
      if (taken === undefined) this.#refused(bound ?? 1, Math.max(0, leftOf(route)));
      this.#taken = taken ?? 0;
    } else if (this.#core.mode === 'hold') {
      const bound = this.#bound(true) as number;
      return this.#core.reserve(this.info, bound).then((r) => {
        if ('available' in r) this.#refused(bound, r.available);
        this.#hold = r.hold;
        this.#core.counts.calls++;
        // A call may outlive its hold's ttl (a long stream, a slow model): kept while it runs.
        this.#keeping = new AbortController();
        void keepHold(r.hold, this.#keeping.signal, () => this.#alive());
      });
    }
    this.#core.counts.calls++;
    return undefined;
  }

  /**
   * How a streamed call says it is still under way (read, or being read): its hold is kept while
   * it is, and left to its ttl once nobody reads the stream (a stream dropped unread ends nowhere).
   */
  keepWhile(alive: () => boolean): void {
    this.#alive = alive;
  }

  /**
   * A streamed call's cost so far (`chars` of output delivered): under a gated route, the hold is
   * told, so a client that leaves mid-stream is charged what it was sent.
   */
  progress(chars: number): void {
    const route = this.#options.hold;
    if (!route || this.#done) return;
    const estimate = { ...NO_USAGE, input: this.#inputTokens(), output: estimateTokens(chars) };
    let cost: number;
    try {
      cost = this.#costOf(estimate);
    } catch {
      // A price that fails here fails the charge too, which reports it: never the caller's stream.
      return;
    }
    spendSoFar(route, this, this.#taken, cost);
  }

  /**
   * After the call: charges `usage` once (later calls answer the first one's promise). `estimated`
   * marks a usage estimated from the text delivered, kept within the hold. Never rejects.
   */
  end(usage: AIUsage, ended: CallEnd, estimated = false): Promise<void> {
    this.#done ??= this.#charge(usage, ended, estimated).catch((error: unknown) => this.#failed(error));
    return this.#done;
  }

  /** The call failed before any token: nothing is charged, the hold is freed. Never rejects. */
  fail(): Promise<void> {
    this.#core.counts.failed++;
    return this.end(NO_USAGE, 'failed');
  }

  async #charge(usage: AIUsage, ended: CallEnd, estimated: boolean): Promise<void> {
    this.#keeping?.abort();
    const core = this.#core;
    const route = this.#options.hold;
    let cost = anyTokens(usage) ? this.#costOf(usage) : 0;
    if (estimated) cost = Math.min(cost, this.#ceiling());
    // Under a route: what its hold has left covers the call; the rest (its input was estimated low) is debited apart.
    const covered = route ? spendFrom(route, this, this.#taken, cost) : cost;
    const mode = route ? 'gate' : core.mode;
    core.publish({
      provider: this.info.provider,
      model: this.info.model,
      usage,
      cost,
      mode,
      estimated,
      ended,
    });
    const hold = this.#hold;
    if (cost === 0) {
      if (hold) await hold.release();
      this.#keyUnused();
      return;
    }
    const { counts } = core;
    counts.charged++;
    counts.quantity += cost;
    counts.tokens.input += usage.input;
    counts.tokens.output += usage.output;
    if (estimated) counts.estimated++;
    const event = this.#event(cost, usage, estimated);
    if (route) {
      if (covered < cost) await this.#over(event, cost - covered, `the ${covered} its route's hold had left`);
    } else if (mode === 'track') await core.track(event);
    else if (!hold) this.#refusal(await core.options.billing.usage.debit(event), cost);
    else if (cost <= hold.quantity) this.#refusal(await hold.settle(cost), cost);
    else {
      // The input was estimated low: the hold is settled whole and the rest charged apart, once.
      this.#refusal(await hold.settle(hold.quantity), hold.quantity);
      await this.#over(event, cost - hold.quantity, `the ${hold.quantity} held: the hold was settled`);
    }
  }

  /** Debits `rest` of a call's cost that its hold did not cover, under the call's derived key, once; told to `onError`. */
  async #over(event: UsageWriteParams, rest: number, held: string): Promise<void> {
    const over = { ...event, quantity: rest, event_key: `${event.event_key}_over` };
    this.#refusal(await this.#core.options.billing.usage.debit(over), rest);
    this.#tell(
      new BillingError(
        `ai: the call cost ${event.quantity}, more than ${held} (its input was estimated low): ${rest} debited under ${over.event_key}`,
      ),
      'overrun',
      event.quantity,
    );
  }

  /** The usage event or debit of a charge: the model and token counts as metadata, never the text. */
  #event(quantity: number, usage: AIUsage, estimated: boolean) {
    const { options } = this.#core;
    const metadata: Record<string, unknown> = {
      ...this.#options.metadata,
      model: this.info.model,
      input_tokens: usage.input,
      output_tokens: usage.output,
      cached_input_tokens: usage.cachedInput,
      cache_write_tokens: usage.cacheWrite,
      reasoning_tokens: usage.reasoning,
    };
    if (estimated) metadata.estimated = true;
    return {
      account_ref_id: this.info.account_ref_id,
      product_code: options.product_code,
      meter_code: options.meter_code,
      quantity,
      event_key: this.info.event_key,
      metadata,
    };
  }

  /** A refused debit or settle: the work was done and is unpaid; told to `onError`. */
  #refusal(result: DebitResult, quantity: number): void {
    if (result.approved) return;
    const { options } = this.#core;
    this.#tell(
      new SettleRefusedError({
        account_ref_id: this.info.account_ref_id,
        product_code: options.product_code,
        meter_code: options.meter_code,
        used: quantity,
        event_key: result.event_key ?? this.info.event_key,
        error_code: String(result.error_code),
        remaining_balance: result.remaining_balance,
      }),
      'charge',
      quantity,
    );
  }

  #failed(error: unknown): void {
    const billingError =
      error instanceof BillingError
        ? error
        : new BillingError(`ai: the charge of ${this.info.event_key} failed: ${String(error)}`, {
            cause: error,
          });
    this.#tell(billingError, 'charge');
    // A hold whose settle failed stays until its ttl (it only holds back credits); a route's is the gate's.
  }

  #tell(error: BillingError, kind: AIErrorContext['kind'], quantity?: number): void {
    this.#core.counts.errors++;
    this.#core.report(error, { kind, event_key: this.info.event_key, model: this.info.model, quantity });
  }

  #costOf(usage: AIUsage): number {
    return costOf(this.#core.options.price, usage, this.info);
  }

  /** The most an estimate may charge: what was held for the call (its bound otherwise). */
  #ceiling(): number {
    if (this.#options.hold) return this.#taken;
    if (this.#hold) return this.#hold.quantity;
    return this.#bound(false) ?? Number.MAX_SAFE_INTEGER;
  }

  /**
   * The most the call may cost: `maxQuantity`, else its max output tokens at the output price plus
   * its estimated input at the input price. `undefined` without either, or an `InvalidRequestError`
   * when one is `required`.
   */
  #bound(required: boolean): number | undefined {
    const { maxQuantity } = this.#core.options;
    if (typeof maxQuantity === 'number') return maxQuantity;
    if (typeof maxQuantity === 'function') {
      const q = maxQuantity(this.info);
      if (Number.isInteger(q) && q >= 1) return q;
      throw new InvalidRequestError(this.info.operation, [
        { field: 'maxQuantity', message: `answered ${String(q)}: it must be an integer >= 1` },
      ]);
    }
    const max = this.info.maxOutputTokens;
    if (max !== undefined)
      return Math.max(1, this.#costOf({ ...NO_USAGE, input: this.#inputTokens(), output: max }));
    if (!required) return undefined;
    throw new InvalidRequestError(this.info.operation, [
      {
        field: 'max_tokens',
        message:
          "is needed in 'hold' mode to bound what the call may cost (max_tokens, max_completion_tokens, max_output_tokens or maxOutputTokens), unless the meter has maxQuantity",
      },
    ]);
  }

  #refused(required: number, available: number): never {
    this.#core.counts.refused++;
    throw new InsufficientCreditsError(this.info.operation, {
      account_ref_id: this.info.account_ref_id,
      product_code: this.#core.options.product_code,
      meter_code: this.#core.options.meter_code,
      required,
      available,
    });
  }
}

/** Calls a user's `onError` through a guard. */
export const reportTo =
  (onError: AIMeterOptions['onError']) =>
  (error: BillingError, context: AIErrorContext): void =>
    void safely(() => onError?.(error, context));
