import type { LRUCache } from 'lru-cache';
import type { Clock } from '../util/clock.js';
import type { ResolvedAccessOptions } from './options.js';

/**
 * The access cache's LRU: answers kept `ttlMs` on the cache's clock, one refresh per key at a time
 * (lru-cache's fetch is the single-flight), an old answer kept when its refresh fails.
 *
 * @param LRU - lru-cache's class, loaded on the first lookup (see platform's `loadLruCache`).
 * @param refresh - Fills or refreshes one answer; sets `set.ttl` from the answer.
 */
export function answerLru<Entry extends object, Context>(
  LRU: typeof LRUCache,
  clock: Clock,
  o: Pick<ResolvedAccessOptions, 'maxEntries' | 'ttlMs'>,
  refresh: (stale: Entry | undefined, set: { ttl?: number }, context: Context) => Promise<Entry>,
): LRUCache<string, Entry, Context> {
  return new LRU<string, Entry, Context>({
    max: o.maxEntries,
    ttl: o.ttlMs,
    // Read the clock on every check: lru-cache's default caches it for 1 ms behind a timer.
    ttlResolution: 0,
    perf: { now: () => clock.now() },
    // A failed refresh keeps the old answer (served only while younger than staleMs); a failed
    // first request leaves nothing: an error is never cached.
    noDeleteOnFetchRejection: true,
    // A request whose answer was evicted meanwhile still answers the lookups waiting on it.
    ignoreFetchAbort: true,
    fetchMethod: (_key, stale, { options: set, context }) => refresh(stale, set, context),
  });
}
