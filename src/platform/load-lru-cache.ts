import type { LRUCache } from 'lru-cache';

/**
 * lru-cache, loaded by an access cache's first lookup, so importing the SDK does not load it (about
 * 5 ms of a 45 ms import in Node). The browser/worker build imports it statically instead (see
 * server.ts): there a separate chunk would cost more bytes than it saves.
 */
export async function loadLruCache(): Promise<{ LRUCache: typeof LRUCache }> {
  return import('lru-cache');
}
