import { DEMO } from './seed.js';
import type { MockOptions } from './types.js';

/** Options with every default applied; what routes read. */
export interface MockConfig {
  apiKey: string;
  signingKey: string;
  /** Without trailing slash; undefined = origin of each request. */
  appUrl: string | undefined;
  cors: boolean;
  refusalStatus: { insufficientCredits: number; invalidUsageModel: number };
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
  };
}

/** Origin for hosted and invoice URLs of one request: the configured app URL or the request's own. */
export function appUrlFor(config: MockConfig, requestUrl: string): string {
  return config.appUrl ?? new URL(requestUrl).origin;
}
