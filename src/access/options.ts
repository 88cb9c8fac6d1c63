import { InvalidRequestError } from '../core/errors/index.js';
import { checkOptions, func, integer, positive, type Rule } from '../internal/checks.js';
import { wholeDurationMs } from '../internal/duration.js';
import { safely } from '../util/safely.js';
import type { AccessStore } from './store.js';

/**
 * Options of {@link createAccessCache}. Every one has a default. Each `…Ms` option is a whole
 * number of ms from 1 to a year (31 536 000 000).
 */
export interface AccessCacheOptions {
  /** How long an answer is reused without asking the service, in ms. Default 30 000, or `staleMs` when you set it shorter. */
  ttlMs?: number | undefined;
  /**
   * How long a "no" is reused (`false`, and the service's documented not-found answer), in ms:
   * shorter than `ttlMs`, so a customer who just paid gets in soon even without a webhook. Default 5 000,
   * or `ttlMs` (and `staleMs`) when you set one shorter.
   */
  denyTtlMs?: number | undefined;
  /**
   * The oldest an answer may ever be when served, in ms. Past its ttl and within this age, an
   * answer is served at once while ONE background request refreshes it, and it stands in when the
   * service fails. At least `ttlMs` and `denyTtlMs`; default 300 000 (or the larger ttl). Set it
   * equal to `ttlMs` to never serve an answer past its ttl.
   */
  staleMs?: number | undefined;
  /** At most this many answers are kept; the least recently used go first. Default 10 000. */
  maxEntries?: number | undefined;
  /**
   * Shares answers, requests and invalidations between instances: `redisAccessStore(client)` from
   * `billing-sdk/redis`. Default: none (each process keeps its own answers).
   */
  store?: AccessStore | undefined;
  /**
   * Told about failures no lookup sees: a background refresh that failed (the stale answer was
   * served), and a store that failed (the cache went on with its memory and the service). Not
   * awaited; a throw here is ignored.
   */
  onError?: ((error: unknown) => void) | undefined;
}

/** The options with their defaults applied. */
export interface ResolvedAccessOptions {
  ttlMs: number;
  denyTtlMs: number;
  staleMs: number;
  maxEntries: number;
  store: AccessStore | undefined;
  onError: (error: unknown) => void;
}

const OPERATION = 'createAccessCache';

/** A whole number of ms, at least 1, at most a year: a ttl of `Infinity` would never refresh. */
const duration: Rule = wholeDurationMs;

const store: Rule = (v) => {
  const s = v as Partial<Record<keyof AccessStore, unknown>>;
  const missing = (['read', 'write', 'release', 'invalidate', 'watch'] as const).filter(
    (name) => typeof s[name] !== 'function',
  );
  return missing.length ? `must be an AccessStore (missing ${missing.join(', ')})` : undefined;
};

const rules: Record<keyof AccessCacheOptions, Rule[]> = {
  ttlMs: [duration],
  denyTtlMs: [duration],
  staleMs: [duration],
  maxEntries: [integer(1), positive],
  store: [store],
  onError: [func],
};

/**
 * Checks the options like client options (one {@link InvalidRequestError} naming each bad one; one
 * naming `options` when they are not a plain object or `undefined`, `null` included) and applies defaults.
 */
export function resolveAccessOptions(options: unknown): ResolvedAccessOptions {
  const given = checkOptions(OPERATION, options, rules) as AccessCacheOptions;
  // A default never contradicts what was given: each one yields to the options set beside it, so
  // `{ ttlMs: 200, staleMs: 600 }` keeps a "no" at most 200 ms instead of failing on the 5 s default.
  const ttlMs = given.ttlMs ?? Math.min(30_000, given.staleMs ?? Infinity);
  const denyTtlMs = given.denyTtlMs ?? Math.min(5_000, ttlMs, given.staleMs ?? Infinity);
  const staleMs = given.staleMs ?? Math.max(300_000, ttlMs, denyTtlMs);
  if (staleMs < Math.max(ttlMs, denyTtlMs)) {
    // Only options the user set can get here: name them.
    const shorter = (['ttlMs', 'denyTtlMs'] as const).filter((name) => (given[name] ?? 0) > staleMs);
    throw new InvalidRequestError(OPERATION, [
      {
        field: 'options.staleMs',
        message: `must be >= ${shorter.join(' and ')} (it is the oldest an answer may be)`,
      },
    ]);
  }
  return {
    ttlMs,
    denyTtlMs,
    staleMs,
    maxEntries: given.maxEntries ?? 10_000,
    store: given.store,
    onError: (error) => void safely(() => given.onError?.(error)),
  };
}
