import type pRetryFunction from 'p-retry';

/**
 * p-retry, loaded when a first attempt fails, so importing the SDK does not load it (it is a
 * tenth of the SDK's import time in Node). The browser/worker build imports it statically instead
 * (see server.ts): there a separate chunk would cost more bytes than it saves.
 */
export async function loadPRetry(): Promise<typeof pRetryFunction> {
  return (await import('p-retry')).default;
}
