import type { AccessStore, AccessStoreRead } from '../access/store.js';
import { InvalidRequestError } from '../core/errors/index.js';
import {
  check,
  checkArgs,
  checkOptions,
  integer,
  positiveNumber,
  type Rule,
  redisClient,
  required,
  text,
} from '../internal/checks.js';
import { isWellFormed } from '../util/well-formed.js';
import { watchInvalidations } from './access-watch.js';
import { evalScript, px, type RedisLike, replyText } from './client.js';
import { INVALIDATE, POLL, READ, RELEASE, WRITE } from './lua/access.js';
import { storeFailure, unexpectedReply } from './store-errors.js';

/** Options of {@link redisAccessStore}. */
export interface RedisAccessStoreOptions {
  /**
   * Start of every key of the store; default `'billing-sdk:access:'`. Instances sharing a prefix
   * share answers and invalidations: give each service (each API key) its own.
   */
  prefix?: string | undefined;
  /**
   * How long to wait for Redis before the call fails, in ms; the cache then goes on with its own
   * memory and the service, so this bounds what a slow Redis adds to a lookup. Default 500.
   */
  timeoutMs?: number | undefined;
  /**
   * How often a watching instance asks Redis for new invalidations, in ms: about the longest
   * another instance keeps serving an answer after `invalidate` resolved. Default 25.
   */
  pollIntervalMs?: number | undefined;
  /**
   * About how many invalidations the stream keeps for instances that fell behind (MAXLEN ~). An
   * instance further behind than this drops all its answers rather than miss one. Default 10 000.
   */
  streamMaxLen?: number | undefined;
}

const OPERATION = 'redisAccessStore';

const optionRules = {
  prefix: [text],
  timeoutMs: [positiveNumber],
  pollIntervalMs: [positiveNumber],
  streamMaxLen: [integer(1)],
} satisfies Record<keyof RedisAccessStoreOptions, Rule[]>;

/** A key or account: any string UTF-8 can carry unchanged (a lone surrogate would become U+FFFD, so two strings could share a key). */
const name: Rule = (v) =>
  typeof v === 'string' && isWellFormed(v) ? undefined : 'must be a string without a lone UTF-16 surrogate';

/**
 * The tokens of the leases this store took. The contract passes no lease token to write and
 * release, so the store remembers them: releasing then never deletes a lease that expired and
 * another instance took since. Entries go on write or release; the sweep only bounds a caller
 * that does neither.
 */
function leaseBook() {
  const leases = new Map<string, { token: string; until: number }>();
  let sweepAt = 1_024;
  return {
    remember(key: string, token: string, leaseMs: number): void {
      if (leases.size >= sweepAt) {
        const now = Date.now();
        for (const [k, lease] of leases) if (lease.until < now) leases.delete(k);
        sweepAt = Math.max(1_024, leases.size * 2);
      }
      leases.set(key, { token, until: Date.now() + leaseMs });
    },
    /** The key's token, forgotten; `''` when this store holds no lease on it. */
    take(key: string): string {
      const lease = leases.get(key);
      leases.delete(key);
      return lease?.token ?? '';
    },
  };
}

/**
 * The `AccessStore` of `createAccessCache` in Redis, for several instances of one service: they
 * share answers (one request to the service per key at a time, across all of them) and
 * invalidations. Each method is one Lua script, so it is one atomic step whatever the other
 * instances send meanwhile; ages and leases run on Redis's clock alone, so hosts whose clocks
 * disagree still agree on how old an answer is.
 *
 * Invalidations win races: `invalidate` moves the account to a new generation, and a write stores
 * only when the generation it read is still current. Other instances learn of it through a Redis
 * stream that each polls every `pollIntervalMs` with a non-blocking read on the client passed in
 * (no second connection, no pub/sub): a stream keeps what was sent while an instance was
 * disconnected, so its cursor resumes after a reconnect; an instance that fell further behind than
 * the stream keeps, or whose Redis lost its data, is told that it may have missed some, and drops
 * every answer.
 *
 * When Redis is down or slow, every method rejects within `timeoutMs` with a
 * {@link billing-sdk!StoreError} (code `'unavailable'`; `'unexpected_reply'` when Redis answers
 * what the store never writes), and the cache goes on with its own memory and the service (told to
 * its `onError`). Use a Redis that does not evict keys
 * without a TTL (any `maxmemory-policy` but `allkeys-*`): an evicted counter loses an invalidation.
 * With Redis Cluster, give the prefix a hash tag (`'billing-sdk:{access}:'`) so every key of the
 * store is in one slot.
 *
 * @param client - A connected node-redis client (`createClient()` from `redis`), or any
 * {@link RedisLike}. It is not closed here: the application owns it.
 * @param options - See {@link RedisAccessStoreOptions}; a bad one (or options that are not a plain
 * object, or a client without `sendCommand`) throws `InvalidRequestError` naming it.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { BillingClient, createAccessCache } from 'billing-sdk';
 * import { redisAccessStore } from 'billing-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const access = createAccessCache(new BillingClient(), {
 *   store: redisAccessStore(redis),
 *   onError: (error) => console.warn('access cache:', error),
 * });
 * if (await access.isActive({ account_ref_id: 'acct_1' })) {
 *   // serve the feature
 * }
 * ```
 */
export function redisAccessStore(client: RedisLike, options: RedisAccessStoreOptions = {}): AccessStore {
  check(OPERATION, { client }, { client: [required, redisClient] });
  const given = checkOptions(OPERATION, options, optionRules) as RedisAccessStoreOptions;
  const prefix = given.prefix ?? 'billing-sdk:access:';
  const timeoutMs = given.timeoutMs ?? 500;
  const pollMs = given.pollIntervalMs ?? 25;
  const streamMaxLen = given.streamMaxLen ?? 10_000;
  const meta = `${prefix}meta`;
  const stream = `${prefix}inv`;
  const run = (operation: string, script: string, keys: string[], args: (string | number)[]) =>
    evalScript(client, script, keys, args, timeoutMs).catch((error: unknown) => {
      throw storeFailure(`${OPERATION}.${operation}`, error);
    });

  const leases = leaseBook();

  return {
    async read(key, account, leaseMs): Promise<AccessStoreRead> {
      checkArgs(`${OPERATION}.read`, [
        ['key', [name], key],
        ['account', [name], account],
        ['leaseMs', [positiveNumber], leaseMs],
      ]);
      const token = crypto.randomUUID();
      const reply = await run(
        'read',
        READ,
        [`${prefix}a:${key}`, `${prefix}l:${key}`, `${prefix}g:${account}`, meta],
        [px(leaseMs), token],
      );
      const [rawGeneration, rawLeased, rawAnswer, rawAge] = Array.isArray(reply) ? reply : [];
      const generation = replyText(rawGeneration);
      if (generation === undefined) throw unexpectedReply(`${OPERATION}.read`, reply);
      const leased = Number(rawLeased) === 1;
      if (leased) leases.remember(key, token, leaseMs);
      const json = replyText(rawAnswer);
      if (json === undefined) return { generation, leased };
      let stored: { v?: unknown; ttl: number };
      try {
        stored = JSON.parse(json);
      } catch {
        throw unexpectedReply(`${OPERATION}.read`, json);
      }
      return { answer: { value: stored.v, ageMs: Number(rawAge), ttlMs: stored.ttl }, generation, leased };
    },

    async write(key, account, generation, value, ttlMs, lifeMs) {
      checkArgs(`${OPERATION}.write`, [
        ['key', [name], key],
        ['account', [name], account],
        ['generation', [name], generation],
        ['ttlMs', [positiveNumber], ttlMs],
        ['lifeMs', [positiveNumber], lifeMs],
      ]);
      const life = px(lifeMs);
      let json: string;
      try {
        json = JSON.stringify({ v: value, ttl: ttlMs, life });
      } catch (error) {
        // A BigInt or a cycle: the caller's value, not Redis, is at fault.
        throw new InvalidRequestError(`${OPERATION}.write`, [
          { field: 'value', message: `must be JSON-serialisable (${(error as Error).message})` },
        ]);
      }
      const keys = [
        `${prefix}a:${key}`,
        `${prefix}l:${key}`,
        `${prefix}g:${account}`,
        meta,
        `${prefix}k:${account}`,
      ];
      return Number(await run('write', WRITE, keys, [generation, json, life, leases.take(key)])) === 1;
    },

    async release(key) {
      checkArgs(`${OPERATION}.release`, [['key', [name], key]]);
      const token = leases.take(key);
      // Not this instance's lease (never taken, or already given up): nothing of its own to give up.
      if (token) await run('release', RELEASE, [`${prefix}l:${key}`], [token]);
    },

    async invalidate(account) {
      checkArgs(`${OPERATION}.invalidate`, [['account', [name], account]]);
      await run(
        'invalidate',
        INVALIDATE,
        [`${prefix}g:${account}`, `${prefix}k:${account}`, meta, stream],
        [account, streamMaxLen, crypto.randomUUID()],
      );
    },

    watch: (listener, onError) =>
      watchInvalidations(
        { pollMs, poll: (args) => run('watch', POLL, [meta, stream], args) },
        listener,
        onError,
      ),
  };
}
