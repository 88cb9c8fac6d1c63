import { BillingClient } from '../client.js';
import type { ClientOptions } from '../core/options.js';
import { CliFailure } from './fail.js';

/**
 * The client of a command, from `BILLING_API_KEY` and `BILLING_BASE_URL` as `new BillingClient()`
 * reads them. A missing or malformed key is a {@link CliFailure} (exit 2) naming the variable,
 * not a stack trace.
 */
export function clientFromEnv(options: ClientOptions = {}): BillingClient {
  if (!process.env.BILLING_API_KEY) {
    throw new CliFailure('BILLING_API_KEY is not set: the relay sends with the API key of your gateway');
  }
  try {
    return new BillingClient(options);
  } catch (error) {
    throw new CliFailure(`the client cannot be made from the environment: ${(error as Error).message}`);
  }
}
