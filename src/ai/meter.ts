import type { BillingClient } from '../client.js';
import type { AIEvent } from '../core/diagnostics.js';
import { BillingError } from '../core/errors/index.js';
import { createCreditHolds } from '../credits/holds.js';
import type { CreditHolds } from '../credits/types.js';
import type { UsageWriteParams } from '../resources/usage.js';
import { createUsageTracker } from '../tracker/tracker.js';
import type { UsageTracker } from '../tracker/types.js';
import { channel, publish } from '../util/diagnostics.js';
import { randomUUID } from '../util/uuid.js';
import { wrapAnthropic } from './anthropic.js';
import { type Calls, Charge, type MeterCore, reportTo } from './charge.js';
import { metering, wrapModel } from './model.js';
import { wrapOpenAI } from './openai.js';
import { checkCallOptions, checkMeterOptions } from './options.js';
import { attach } from './route-hold.js';
import type {
  AICallInfo,
  AICallOptions,
  AIChargeEvent,
  AIChargeMode,
  AIErrorContext,
  AIMeter,
  AIMeterOptions,
  AIMeterStats,
} from './types.js';

const aiChannel = /* @__PURE__ */ channel('billing-sdk:ai');

/**
 * Bills AI calls by the tokens they used: wraps an AI SDK model, an `openai` client or an
 * `@anthropic-ai/sdk` client so that each call is charged to an account, once, under its own
 * `event_key`: tracked as usage (`'track'`), debited (`'debit'`), or held before the call and settled
 * after (`'hold'`). Make one per process (and product and meter); wrap per request.
 *
 * @param options - See {@link AIMeterOptions}.
 * @throws {@link billing-sdk!InvalidRequestError} when an option is invalid.
 * @example
 * ```ts
 * import { BillingClient } from 'billing-sdk';
 * import { createAIMeter } from 'billing-sdk/ai';
 * import OpenAI from 'openai';
 *
 * const meter = createAIMeter({
 *   billing: new BillingClient(),
 *   product_code: 'ai-assistant',
 *   meter_code: 'credits',
 *   price: { input: 0.001, output: 0.003 },
 *   charge: 'hold',
 * });
 * const openai = meter.openai(new OpenAI(), { account_ref_id: 'acct_1' });
 * const answer = await openai.chat.completions.create({
 *   model: 'gpt-4o-mini',
 *   max_completion_tokens: 500,
 *   messages: [{ role: 'user', content: 'Hello' }],
 * });
 * ```
 */
export function createAIMeter(options: AIMeterOptions): AIMeter {
  const checked = checkMeterOptions(options);
  return new Meter(checked);
}

class Meter implements AIMeter, MeterCore {
  readonly options: AIMeterOptions;
  readonly mode: AIChargeMode;
  readonly counts: AIMeterStats = {
    calls: 0,
    charged: 0,
    quantity: 0,
    tokens: { input: 0, output: 0 },
    estimated: 0,
    refused: 0,
    failed: 0,
    errors: 0,
  };
  readonly report: (error: BillingError, context: AIErrorContext) => void;
  #tracker: UsageTracker | undefined;
  #ownTracker = false;
  #holds: CreditHolds | undefined;

  /** The client as the tracker and holds take it (the options type it by the methods the meter calls). */
  get #client(): BillingClient {
    return this.options.billing as unknown as BillingClient;
  }

  constructor(options: AIMeterOptions) {
    this.options = options;
    this.mode = options.charge ?? 'track';
    this.report = reportTo(options.onError);
    this.#tracker = options.tracker;
    this.#holds = options.holds;
  }

  track(event: UsageWriteParams): Promise<unknown> {
    if (!this.#tracker) {
      this.#ownTracker = true;
      this.#tracker = createUsageTracker(this.#client, {
        onDeadLetter: (refused, reason) => {
          this.counts.errors++;
          this.report(
            new BillingError(
              `ai: the service refused the usage event ${refused.event_key} (${String((reason as { error_code?: unknown }).error_code ?? 'refused')}): a prepaid-credits meter takes charge 'debit' or 'hold'`,
            ),
            { kind: 'dead-letter', event_key: refused.event_key, quantity: refused.quantity },
          );
        },
      });
    }
    return this.#tracker.track(event);
  }

  reserve(info: AICallInfo, quantity: number) {
    this.#holds ??= createCreditHolds(this.#client);
    return this.#holds
      .reserve({
        account_ref_id: info.account_ref_id,
        product_code: this.options.product_code,
        meter_code: this.options.meter_code,
        quantity,
        event_key: info.event_key,
      })
      .then((r) => (r.approved ? { hold: r.hold } : { available: r.available }));
  }

  publish(event: AIChargeEvent): void {
    publish(aiChannel, (): AIEvent => ({ event: 'charge', ...event }));
  }

  /** The calls of one wrap: each gets a key (the wrap's own, then derived ones) and a charge. */
  calls(operation: string, options: AICallOptions): Calls {
    const opts = checkCallOptions(operation, options);
    if (opts.hold) attach(opts.hold);
    // The numbers of the keys derived from the wrap's own: a call that charged nothing under its
    // key (refused, failed before any token) gives its number back, so the AI SDK's retry of a
    // failed call, made as a new call, is charged under the key the failed one had: a retried
    // request that succeeds at once then charges that key once, not a second key.
    let next = 1;
    const free: number[] = [];
    return {
      start: (provider, op, model, stream, maxOutputTokens, input) => {
        const given = opts.event_key;
        const n = given === undefined ? 0 : (free.shift() ?? next++);
        const event_key = given === undefined ? `ai_${randomUUID()}` : n === 1 ? given : `${given}_${n}`;
        const info: AICallInfo = {
          provider,
          operation: op,
          model,
          account_ref_id: opts.account_ref_id,
          event_key,
          stream,
          maxOutputTokens,
        };
        const unused =
          given === undefined
            ? undefined
            : () => {
                free.push(n);
                free.sort((a, b) => a - b);
              };
        return new Charge(this, info, opts, input, unused);
      },
    };
  }

  model<M extends object>(model: M, options: AICallOptions): M {
    return wrapModel(model, this.calls('meter.model', options));
  }

  middleware(options: AICallOptions) {
    return metering(this.calls('meter.middleware', options));
  }

  openai<C extends object>(client: C, options: AICallOptions): C {
    return wrapOpenAI(client, this.calls('meter.openai', options));
  }

  anthropic<C extends object>(client: C, options: AICallOptions): C {
    return wrapAnthropic(client, this.calls('meter.anthropic', options));
  }

  stats(): AIMeterStats {
    return { ...this.counts, tokens: { ...this.counts.tokens } };
  }

  async close(): Promise<void> {
    if (this.#ownTracker) await this.#tracker?.close();
  }
}
