// The access cache of the access children (access-process.ts, access-seen-process.ts).
// The modules themselves, not src/index.ts: the child's bundle holds what it runs, nothing more.
import { createAccessCache } from '../../src/access/cache.js';
import type { AccessStore } from '../../src/access/store.js';
import { BillingClient } from '../../src/client.js';
import { env, now, print } from './print.js';

/**
 * createAccessCache asking the mock at BASE_URL with API_KEY, on `store` as given but that each call
 * of its watch listener is printed as {"type":"told","account","at"}, after the cache acted on it:
 * the moment this instance dropped the account's answers. `ttlMs` is its ttl, deny ttl and stale
 * window; what its onError is told lands in `onErrors`.
 */
export function watchedAccessCache(store: AccessStore, ttlMs: number) {
  const onErrors: string[] = [];
  const access = createAccessCache(
    new BillingClient({ apiKey: env('API_KEY'), baseUrl: env('BASE_URL'), logLevel: 'off', maxRetries: 0 }),
    {
      ttlMs,
      denyTtlMs: ttlMs,
      staleMs: ttlMs,
      store: {
        ...store,
        watch: (listener, onError) =>
          store.watch((account) => {
            listener(account);
            print({ type: 'told', account: account ?? null, at: now() });
          }, onError),
      },
      onError: (error) => void onErrors.push(String(error)),
    },
  );
  return { access, onErrors };
}
