// The access cache of the access children (access-process.ts, access-seen-process.ts).
// The modules themselves, not src/index.ts: the child's bundle holds what it runs, nothing more.
import { type AccessCache, createAccessCache } from '../../src/access/cache.js';
import type { AccessStore } from '../../src/access/store.js';
import { BillingClient } from '../../src/client.js';
import { env, now, print, sleep } from './print.js';

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
      store: printingWatch(store),
      onError: (error) => void onErrors.push(String(error)),
    },
  );
  return { access, onErrors };
}

/**
 * `store` whose watch listener prints {"type":"told"} after each call. The cache scopes its store to
 * its client's service (`forService`), so the wrapper scopes too and wraps what that returns: a
 * spread `forService` alone would hand the cache the inner store's scoped copy, unwrapped.
 */
function printingWatch(store: AccessStore): AccessStore {
  return {
    ...store,
    watch: (listener, onError) =>
      store.watch((account) => {
        listener(account);
        print({ type: 'told', account: account ?? null, at: now() });
      }, onError),
    forService: (service) => printingWatch(store.forService?.(service) ?? store),
  };
}

/**
 * The child's first lookups, so what the test measures is not module loading, JIT or the first
 * connection: `account`, then another each time, looked up until one went through the store
 * without an error (at most 5 tries). On a loaded machine a process starting up may read no reply
 * within the store's timeoutMs, and the cache then leaves the store alone for a second
 * (STORE_PAUSE_MS, src/access/cache.ts): its lookups go to the service on their own meanwhile, so a
 * test of one request for a fleet must not begin inside that second.
 */
export async function warmUp(access: AccessCache, onErrors: string[], account: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = onErrors.length;
    await access.isActive({ account_ref_id: attempt === 0 ? account : `${account}_${attempt}` });
    if (onErrors.length === before) return;
    await sleep(1_100);
  }
}
