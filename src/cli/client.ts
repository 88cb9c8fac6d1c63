import { BillingClient, serviceOf } from '../client.js';
import type { ClientOptions } from '../core/options.js';
import type { SpoolFlags } from './args.js';
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

/**
 * The service whose spool the flags name, as a tracker of the app would choose it: `undefined`
 * when the flags name the place themselves (`--stream`, `--table`, `--dir`), else the namespace of
 * the client `BILLING_API_KEY` and `BILLING_BASE_URL` make (a spool's default stream or table is
 * its service's). Without them that is a {@link CliFailure} (exit 2) saying what to set.
 *
 * @param client - The command's client when it has one already (the relay's).
 */
export function serviceOfFlags(flags: SpoolFlags, client?: BillingClient): string | undefined {
  if (flags.kind === 'file' || (flags.kind === 'redis' ? flags.stream : flags.table) !== undefined)
    return undefined;
  if (client) return serviceOf(client);
  const name = flags.kind === 'redis' ? '--stream' : '--table';
  if (!process.env.BILLING_API_KEY)
    throw new CliFailure(
      `BILLING_API_KEY is not set: without ${name}, the spool is the service's (named after its API key and base URL): set the app's BILLING_API_KEY and BILLING_BASE_URL, or give ${name}`,
    );
  return serviceOf(clientFromEnv());
}
