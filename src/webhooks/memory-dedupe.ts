import { InvalidRequestError } from '../core/errors/index.js';
import { checkOptionsObject } from '../internal/checks.js';
import type { ClaimOutcome, DedupeStore } from './dedupe.js';

/** Options of {@link memoryDedupeStore}. */
export interface MemoryDedupeOptions {
  /** Most ids kept (done ones and claims); the oldest are forgotten first. Default 10 000. */
  max?: number | undefined;
  /** Milliseconds since the epoch, for claim expiry; default `Date.now`. Tests pass their own. */
  now?: (() => number) | undefined;
  /**
   * How long a done id is remembered, in ms; default: until it is among the oldest past `max`.
   * (The gate's Idempotency-Keys are remembered 24 h by default this way.)
   */
  doneTtlMs?: number | undefined;
}

/** A live or expired claim, or a done mark (remembered until `until`). */
type Entry =
  | { token: string; expiresAt: number }
  | { done: true; until: number; answer?: string | undefined };

/**
 * An in-memory {@link DedupeStore}, the handlers' default: atomic because JavaScript runs one
 * method at a time. Bounded, so a long-running receiver does not grow without limit. Per process:
 * when several processes receive webhooks, use a shared store (`redisDedupeStore` from
 * `billing-sdk/redis`).
 *
 * @param options - `{ max, now }`, or `max` alone (the former signature).
 * @throws {@link InvalidRequestError} when `options` is neither a number nor a plain object.
 */
export function memoryDedupeStore(options: MemoryDedupeOptions | number = {}): DedupeStore {
  if (typeof options !== 'number') checkOptionsObject('memoryDedupeStore', options);
  const {
    max = 10_000,
    now = Date.now,
    doneTtlMs = Number.POSITIVE_INFINITY,
  } = typeof options === 'number' ? { max: options } : options;
  if (typeof doneTtlMs !== 'number' || !(doneTtlMs > 0)) {
    throw new InvalidRequestError('memoryDedupeStore', [
      { field: 'doneTtlMs', message: 'must be a number > 0' },
    ]);
  }
  // Maps iterate in insertion order, and every write re-inserts: the first entry is the stalest.
  const entries = new Map<string, Entry>();
  const isLive = (entry: Entry | undefined, at: number): entry is { token: string; expiresAt: number } =>
    entry !== undefined && 'token' in entry && entry.expiresAt > at;
  const isDone = (entry: Entry | undefined, at: number): boolean =>
    entry !== undefined && 'done' in entry && entry.until > at;
  const remember = (id: string, entry: Entry, at: number): void => {
    entries.delete(id);
    entries.set(id, entry);
    if (entries.size > max) evictOne(at);
  };
  // Forgetting a live claim would let a second delivery run the event alongside it: the stalest entry
  // that is not one goes. Live claims are as many as events being processed, so the scan is short.
  const evictOne = (at: number): void => {
    for (const [id, entry] of entries) {
      if (!isLive(entry, at)) {
        entries.delete(id);
        return;
      }
    }
  };
  return {
    claim(id, token, ttlMs): ClaimOutcome {
      const at = now();
      const entry = entries.get(id);
      if (isDone(entry, at)) return 'done';
      if (isLive(entry, at) && entry.token !== token) return 'processing';
      remember(id, { token, expiresAt: at + ttlMs }, at);
      return 'claimed';
    },
    renew(id, token, ttlMs) {
      const at = now();
      const entry = entries.get(id);
      if (!isLive(entry, at) || entry.token !== token) return false;
      remember(id, { token, expiresAt: at + ttlMs }, at);
      return true;
    },
    complete(id, token, answer) {
      const at = now();
      const entry = entries.get(id);
      const held = isLive(entry, at) && entry.token === token;
      remember(id, { done: true, until: at + doneTtlMs, answer }, at);
      return held;
    },
    answer(id) {
      const entry = entries.get(id);
      return entry !== undefined && 'done' in entry && isDone(entry, now()) ? entry.answer : undefined;
    },
    release(id, token) {
      const entry = entries.get(id);
      if (entry !== undefined && 'token' in entry && entry.token === token) entries.delete(id);
    },
  };
}
