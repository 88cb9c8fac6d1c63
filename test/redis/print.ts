// What the child processes of the tests (test/redis/*-process.ts, test/postgres/*-process.ts) share.
import { BillingClient } from '../../src/index.js';

/** Prints one message as a JSON line: how a child process talks to its test (see processes.ts). */
export function print(message: Record<string, unknown> & { type: string }): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** The environment variable `name`, which the test must have set. */
export function env(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}

/** The host's clock in ms with sub-ms precision, comparable between processes of one host. */
export const now = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The client of a tracker child: the mock at BASE_URL with API_KEY. */
export function mockBilling(): BillingClient {
  return new BillingClient({
    baseUrl: env('BASE_URL'),
    apiKey: env('API_KEY'),
    // Answers the mock dropped are retried soon: the test's time goes to the crash, not to backoff.
    retryDelay: () => 20,
  });
}

/** Runs `each(n)` for n from 0 to `count` - 1, `parallel` at a time, pausing `paceMs` between batches. */
export async function inBatches(
  count: number,
  parallel: number,
  paceMs: number,
  each: (n: number) => Promise<void>,
): Promise<void> {
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, i) => start + i);
    await Promise.all(batch.map(each));
    await sleep(paceMs);
  }
}
