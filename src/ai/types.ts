import type { AIEvent } from '../core/diagnostics.js';
import type { BillingError } from '../core/errors/index.js';
import type { RequestOptions } from '../core/options.js';
import type { CreditHolds } from '../credits/types.js';
import type { GateHold } from '../gate/types.js';
import type { MeterParams, UsageWriteParams } from '../resources/usage.js';
import type { CreditBalance, DebitResult } from '../schemas/usage.js';
import type { UsageTracker } from '../tracker/types.js';

// The AI meter's public shape apart from its machinery: what users pass and hold.

/** How a metered call is charged: see {@link AIMeterOptions.charge}. */
export type AIChargeMode = 'track' | 'debit' | 'hold';

/**
 * The tokens one call used, as the provider reported them (or as estimated, see
 * `estimated` of {@link AIChargeEvent}). `input` and `output` are totals: the cached and cache-written
 * tokens are part of `input`, the reasoning tokens part of `output`.
 */
export interface AIUsage {
  /** Every input (prompt) token, cached ones included. */
  input: number;
  /** Every output (completion) token, reasoning ones included. */
  output: number;
  /** Of `input`, the tokens read from the provider's prompt cache. */
  cachedInput: number;
  /** Of `input`, the tokens written to the provider's prompt cache (Anthropic's cache creation). */
  cacheWrite: number;
  /** Of `output`, the reasoning tokens. */
  reasoning: number;
}

/** Which way in a call came through. */
export type AIProvider = 'openai' | 'anthropic' | 'ai-sdk';

/** What a price function and `maxQuantity` are told of a call (never its prompt or output). */
export interface AICallInfo {
  /** The way in: the OpenAI client, the Anthropic client or an AI SDK model. */
  provider: AIProvider;
  /** The method, e.g. `chat.completions.create`, `responses.create`, `messages.create`, `doStream`. */
  operation: string;
  /** The model asked for (the provider may answer with a dated name of it). */
  model: string;
  /** The account charged. */
  account_ref_id: string;
  /** The call's key: every charge of the call is made under it (or keys derived from it). */
  event_key: string;
  /** Whether the answer is streamed. */
  stream: boolean;
  /** The most output tokens the call asked for (`max_tokens` and its kin), when it did. */
  maxOutputTokens?: number | undefined;
}

/** Units of the meter per token of each kind (fractions allowed: the call's sum is rounded up). */
export interface AITokenPrices {
  /** Per input token not read from or written to a cache. */
  input: number;
  /** Per output token (reasoning ones too unless `reasoning` is given). */
  output: number;
  /** Per input token read from the cache; default the `input` price. */
  cachedInput?: number | undefined;
  /** Per input token written to the cache; default the `input` price. */
  cacheWrite?: number | undefined;
  /** Per reasoning token; default the `output` price. */
  reasoning?: number | undefined;
}

/**
 * What a call costs in the meter's units: prices per token, or a function of the usage and the
 * call (any non-negative number). Either way the call costs the sum rounded up; 0 charges nothing.
 */
export type AIPrice = AITokenPrices | ((usage: AIUsage, call: AICallInfo) => number);

/** What `onError` is told besides the error: which call, and what went wrong with its charge. */
export interface AIErrorContext {
  /**
   * `charge`: the charge failed or was refused (a debit or settle the service refused, a track the
   * spool refused): the call's result was the user's already, the tokens are unpaid. `overrun`: the
   * call cost more than its hold (its input was estimated low), or than a gated route's hold had
   * left: the hold was settled whole and the rest debited under `${event_key}_over`. `dead-letter`: the service refused the usage event
   * (a prepaid-credits meter takes `'debit'` or `'hold'`, not `'track'`).
   */
  kind: 'charge' | 'overrun' | 'dead-letter';
  /** The call's key. */
  event_key: string;
  /** The model, when known. */
  model?: string | undefined;
  /** What the call cost, in the meter's units, when known. */
  quantity?: number | undefined;
}

/**
 * The client the meter charges through: a `BillingClient` of `billing-sdk`. Typed by the methods the
 * meter calls, so a client of either of the package's builds (ESM, CJS) fits.
 */
export interface AIBillingClient {
  /** The client's usage namespace. */
  readonly usage: {
    /** `usage.debit`: what `'debit'` mode and an overrun charge with. */
    debit(params: UsageWriteParams, options?: RequestOptions): PromiseLike<DebitResult>;
    /** `usage.record`: what the meter's own tracker sends with. */
    record(params: UsageWriteParams, options?: RequestOptions): PromiseLike<unknown>;
    /** `usage.balance`: what the meter's own holds read. */
    balance(params: MeterParams, options?: RequestOptions): PromiseLike<CreditBalance>;
  };
}

/** Options of {@link createAIMeter}. */
export interface AIMeterOptions {
  /** The client that records, debits and reads balances (a `BillingClient`). */
  billing: AIBillingClient;
  /** The product the calls are billed on, e.g. `ai-assistant`. */
  product_code: string;
  /** Its meter, e.g. `credits`. */
  meter_code: string;
  /** Tokens to units: see {@link AIPrice}. */
  price: AIPrice;
  /**
   * `'track'` (default): after the call, one usage event through the tracker (nothing added to the
   * call's latency but the spool's append), for a usage-billed meter. `'debit'`: after the call, one
   * `usage.debit`, awaited (a refusal goes to `onError`: the result is the user's already).
   * `'hold'`: before the call, the most it may cost is reserved (refused: {@link billing-sdk!InsufficientCreditsError},
   * the provider never called); after it, what it cost is settled. A prepaid-credits meter takes
   * `'debit'` or `'hold'`: the service refuses usage events on it.
   */
  charge?: AIChargeMode | undefined;
  /** The tracker of `'track'`; default one the meter makes (`createUsageTracker(billing)`, closed by {@link AIMeter.close}). */
  tracker?: UsageTracker | undefined;
  /** The holds of `'hold'`; default `createCreditHolds(billing)` (one process: give a shared store for several). */
  holds?: CreditHolds | undefined;
  /**
   * The most a call may cost, reserved by `'hold'` instead of its bound (its max output tokens at the
   * output price plus its estimated input at the input price): a positive integer, or a function of
   * the call. A call with neither bound is refused with an `InvalidRequestError` before it is sent.
   */
  maxQuantity?: number | ((call: AICallInfo) => number) | undefined;
  /** Told of what the call's result does not carry (see {@link AIErrorContext}). What it throws is dropped. */
  onError?: ((error: BillingError, context: AIErrorContext) => void) | undefined;
}

/** Per request: whom a wrapped model or client charges. */
export interface AICallOptions {
  /** The account charged. */
  account_ref_id: string;
  /**
   * The key of the first call (the second is `${event_key}_2`, and so on): give your request's
   * `Idempotency-Key`, and a retried request is charged once. A call that charged nothing (refused,
   * or failed before any token) leaves its key to the next call, so a call the AI SDK retries keeps
   * its key. Default `ai_<uuid>` per call.
   */
  event_key?: string | undefined;
  /**
   * A gated route's hold (`decision.hold`): the calls are charged against it (`hold.use` of their
   * total, settled by the gate after the answer, even when the client leaves mid-stream), and a call
   * that could cost more than it has left is refused before the provider.
   */
  hold?: GateHold | undefined;
  /** Your own metadata, added to each charge's (the model and the token counts are added by the meter). */
  metadata?: Record<string, unknown> | undefined;
}

/** What a charge published on `billing-sdk:ai` says: never the account, a key, the prompt or the output. */
export type AIChargeEvent = Omit<AIEvent, 'event'> & {
  /** The way in. */
  readonly provider: AIProvider;
};

/** Counts of {@link AIMeter.stats}, since the meter was made. */
export interface AIMeterStats {
  /** Calls made through the meter (refused ones not included). */
  calls: number;
  /** Calls charged (a cost above 0). */
  charged: number;
  /** Units charged in all. */
  quantity: number;
  /** Input and output tokens charged for. */
  tokens: {
    /** Input tokens. */
    input: number;
    /** Output tokens. */
    output: number;
  };
  /** Charges made on an estimate (a stream cancelled before its usage came). */
  estimated: number;
  /** Calls refused before the provider (insufficient credits). */
  refused: number;
  /** Calls that failed before any token: nothing charged. */
  failed: number;
  /** Charges that failed or were refused (told to `onError`). */
  errors: number;
}

/** The meter made by {@link createAIMeter}. */
export interface AIMeter {
  /**
   * An AI SDK language model (`openai('gpt-4o')`, any `LanguageModelV2`/`V3`) whose calls are
   * charged: `generateText`, `streamText`, `generateObject`, `streamObject`, each step of a tool loop a call.
   */
  model<M extends object>(model: M, options: AICallOptions): M;
  /**
   * The same as AI SDK middleware, for `wrapLanguageModel({ model, middleware })`: its
   * `wrapGenerate` and `wrapStream` charge each call.
   */
  middleware(options: AICallOptions): AIModelMiddleware;
  /**
   * An `openai` client with the same API, whose `chat.completions.create` and `responses.create`
   * (streamed or not) are charged, and so the helpers built on them (`chat.completions.stream`,
   * `parse` and `runTools`, `responses.stream` and `parse`); everything else passes through untouched.
   */
  openai<C extends object>(client: C, options: AICallOptions): C;
  /**
   * An `@anthropic-ai/sdk` client with the same API, whose `messages.create` (streamed or not) and
   * `messages.stream` are charged, and so `beta.messages` (`create`, `stream`, the helpers built on
   * them); everything else passes through untouched.
   */
  anthropic<C extends object>(client: C, options: AICallOptions): C;
  /** Counts since the meter was made. */
  stats(): AIMeterStats;
  /** Closes the tracker the meter made (sending what is queued); a tracker you gave is yours to close. */
  close(): Promise<void>;
}

/** The AI SDK's language model middleware, as the meter makes it (structural: `ai` is never imported). */
export interface AIModelMiddleware {
  /** The middleware version of the AI SDK's current models. */
  readonly specificationVersion: 'v3';
  /** Charges a `doGenerate` call. */
  wrapGenerate: (options: {
    doGenerate: () => PromiseLike<unknown>;
    params: unknown;
    model: unknown;
  }) => Promise<never>;
  /** Charges a `doStream` call once its stream is done with. */
  wrapStream: (options: {
    doStream: () => PromiseLike<unknown>;
    params: unknown;
    model: unknown;
  }) => Promise<never>;
}
