/**
 * Remembers which deliveries were processed, by `transaction_id`. Methods may be async, so a shared
 * store (Redis, a database table) fits behind the same interface. A method that throws or rejects
 * makes the handler answer 500, so the sender retries later.
 */
export interface DedupeStore {
  /** Whether a delivery with this `transaction_id` was already processed. */
  has(id: string): boolean | Promise<boolean>;
  /** Records `id` as processed; called after `onEvent` succeeded. */
  add(id: string): void | Promise<void>;
}

/**
 * An in-memory {@link DedupeStore} that keeps the most recent `max` ids (default 10 000), so a
 * long-running receiver does not grow without bound. Per process: use a shared store when several
 * processes receive webhooks.
 */
export function memoryDedupeStore(max = 10_000): DedupeStore {
  const seen = new Set<string>();
  return {
    has: (id) => seen.has(id),
    add(id) {
      seen.delete(id);
      seen.add(id);
      // Sets iterate in insertion order: the first id is the oldest.
      if (seen.size > max) seen.delete(seen.values().next().value as string);
    },
  };
}
