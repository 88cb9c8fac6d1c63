/**
 * `billing-sdk/ai`: bills AI calls by the tokens they used. {@link createAIMeter} wraps an AI SDK
 * language model, an `openai` client or an `@anthropic-ai/sdk` client, each keeping its own surface,
 * and charges each call to an account once: tracked as usage, debited, or held before the call and
 * settled after; streams are charged when done with (completed, cut short, cancelled by the
 * consumer), a call that failed before any token costs nothing. Nothing here imports `openai`,
 * `@anthropic-ai/sdk` or `ai`: an app that uses none of them installs nothing more.
 *
 * @module billing-sdk/ai
 */

export type { AIEvent } from '../core/diagnostics.js';
export { type CreditsShortfall, InsufficientCreditsError } from '../core/errors/index.js';
export { createAIMeter } from './meter.js';
export type {
  AIBillingClient,
  AICallInfo,
  AICallOptions,
  AIChargeEvent,
  AIChargeMode,
  AIErrorContext,
  AIMeter,
  AIMeterOptions,
  AIMeterStats,
  AIModelMiddleware,
  AIPrice,
  AIProvider,
  AITokenPrices,
  AIUsage,
} from './types.js';
