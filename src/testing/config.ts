import { DEMO } from './seed.js';
import type { MockOptions } from './types.js';
import type { RetryPolicy } from './webhooks/deliver.js';

/** Options with every default applied; what routes read. */
export interface MockConfig {
  apiKey: string;
  signingKey: string;
  /** Without trailing slash; undefined = origin of each request. */
  appUrl: string | undefined;
  cors: boolean;
  refusalStatus: { insufficientCredits: number; invalidUsageModel: number };
  /** Receiver registered at start and on reset. */
  webhookUrl: string | undefined;
  webhookRetry: RetryPolicy;
  /** Draws for faults with a probability below 1. */
  random: () => number;
}

/** A bad retry option would silently mean "never deliver" or a busy loop; refuse it up front. */
function atLeast(value: number, min: number, name: string, integer: boolean): number {
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new RangeError(`webhookRetry.${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}`);
  }
  return value;
}

/** Applies the documented defaults. */
export function resolveConfig(options: MockOptions = {}): MockConfig {
  return {
    apiKey: options.apiKey ?? DEMO.apiKey,
    signingKey: options.signingKey ?? DEMO.signingKey,
    appUrl: options.appUrl?.replace(/\/+$/, ''),
    cors: options.cors ?? false,
    refusalStatus: {
      insufficientCredits: options.refusalStatus?.insufficientCredits ?? 402,
      invalidUsageModel: options.refusalStatus?.invalidUsageModel ?? 422,
    },
    webhookUrl: options.webhookUrl,
    webhookRetry: {
      attempts: atLeast(options.webhookRetry?.attempts ?? 5, 1, 'attempts', true),
      delayMs: atLeast(options.webhookRetry?.delayMs ?? 50, 0, 'delayMs', false),
      timeoutMs: atLeast(options.webhookRetry?.timeoutMs ?? 5000, 1, 'timeoutMs', false),
    },
    random: options.random ?? Math.random,
  };
}

/** Origin for hosted and invoice URLs of one request: the configured app URL or the request's own. */
export function appUrlFor(config: MockConfig, requestUrl: string): string {
  return config.appUrl ?? new URL(requestUrl).origin;
}
