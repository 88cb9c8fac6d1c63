import type { AccessStore, AccessStoreRead } from '../access/store.js';
import { InvalidRequestError } from '../core/errors/index.js';
import { checkArgs, checkOptions, integer, positiveNumber, type Rule, text } from '../internal/checks.js';
import { isWellFormed } from '../util/well-formed.js';
import { watchInvalidations } from './access-watch.js';
import { adaptClient, type RedisClient } from './adapt.js';
import { evalScript, px, replyText, timerMs } from './client.js';
import { keyPrefix, tagged } from './keys.js';
import { DROP, NOTIFY, POLL, READ, RELEASE, WRITE } from './lua/access.js';
import { storeFailure, unexpectedReply } from './store-errors.js';

/** Options of {@link redisAccessStore}. */
export interface RedisAccessStoreOptions {
  /**
   * Start of every key of the store; default `'billing-sdk:access:'`. Instances sharing a prefix
   * share answers and invalidations: give each service (each API key) its own. No hash tag is
   * needed for Redis Cluster: the store tags its keys itself (a tag in the prefix puts every key
   * of the store in that one slot).
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
  prefix: [text, keyPrefix],
  timeoutMs: [timerMs],
  pollIntervalMs: [timerMs],
  streamMaxLen: [integer(1)],
} satisfies Record<keyof RedisAccessStoreOptions, Rule[]>;

/** A key or account: any string UTF-8 can carry unchanged (a lone surrogate would become U+FFFD, so two strings could share a key). */
const name: Rule = (v) =>
  typeof v === 'string' && isWellFormed(v) ? undefined : 'must be a string without a lone UTF-16 surrogate';

/** How long an account's generation hash lives at least, in ms (lua/access.ts: it may expire). */
const GENERATION_MS = 24 * 60 * 60 * 1000;

/**
 * The tokens of the leases this store took, with the lease's key. The contract passes no lease
 * token to write and release (nor the account to release), so the store remembers them: releasing
 * then never deletes a lease that expired and another instance took since. Entries go on write or
 * release; the sweep only bounds a caller that does neither.
 */
function leaseBook() {
  const leases = new Map<string, { token: string; until: number; leaseKey: string }>();
  let sweepAt = 1_024;
  return {
    remember(key: string, token: string, leaseMs: number, leaseKey: string): void {
      if (leases.size >= sweepAt) {
        const now = Date.now();
        for (const [k, lease] of leases) if (lease.until < now) leases.delete(k);
        sweepAt = Math.max(1_024, leases.size * 2);
      }
      leases.set(key, { token, until: Date.now() + leaseMs, leaseKey });
    },
    /** The key's lease, forgotten; `undefined` when this store holds none on it. */
    take(key: string): { token: string; leaseKey: string } | undefined {
      const lease = leases.get(key);
      leases.delete(key);
      return lease;
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
 *
 * Redis Cluster works with the default options: an account's answers, leases and generation share
 * the account's hash tag (`<prefix>{<account>}:…`), so each lookup is one script in one slot and
 * accounts spread over every master; the invalidation stream and its counter share the store's
 * own tag (`<prefix>{<prefix>}:…`), one slot every instance polls (a store per prefix spreads
 * them). `invalidate` is therefore two steps: the account's (new generation, answers dropped),
 * then the stream's. Each step may run twice (a resend after a lost answer): `read` with its
 * token finds the lease it took, `write` stores the same answer again or is refused, `release`
 * finds nothing left, and an account invalidated (or told) twice is as invalidated as once.
 *
 * @param client - A connected client: node-redis (`createClient()` or `createCluster()` from
 * `redis`), ioredis (`new Redis()` or `new Cluster()`), or any {@link RedisLike}; see
 * {@link RedisClient}. It is not closed here: the application owns it.
 * @param options - See {@link RedisAccessStoreOptions}; a bad one (or options that are not a plain
 * object, or a client none of these) throws `InvalidRequestError` naming it.
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
export function redisAccessStore(client: RedisClient, options: RedisAccessStoreOptions = {}): AccessStore {
  const runner = adaptClient(OPERATION, client);
  const given = checkOptions(OPERATION, options, optionRules) as RedisAccessStoreOptions;
  const prefix = given.prefix ?? 'billing-sdk:access:';
  return {
    ...storeAt(runner, given, prefix),
    // The cache's answers under its client's service: a sandbox key's "yes" is never served to the
    // live client on the same Redis, nor one base URL's to another.
    forService: (service) => storeAt(runner, given, `${prefix}${service}:`),
  };
}

/** The store whose keys start with `prefix`. */
function storeAt(
  runner: ReturnType<typeof adaptClient>,
  given: RedisAccessStoreOptions,
  prefix: string,
): AccessStore {
  const timeoutMs = given.timeoutMs ?? 500;
  const pollMs = given.pollIntervalMs ?? 25;
  const streamMaxLen = given.streamMaxLen ?? 10_000;
  const own = tagged(prefix, prefix);
  const meta = `${own}:meta`;
  const stream = `${own}:inv`;
  /** The start of every key of `account`: they share its hash tag. */
  const of = (account: string) => tagged(prefix, account);
  const run = (operation: string, script: string, keys: string[], args: (string | number)[]) =>
    evalScript(runner, script, keys, args, timeoutMs).catch((error: unknown) => {
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
      const base = of(account);
      const leaseKey = `${base}:l:${key}`;
      let reply: unknown;
      try {
        reply = await run(
          'read',
          READ,
          [`${base}:a:${key}`, leaseKey, `${base}:g`],
          [px(leaseMs), token, GENERATION_MS],
        );
      } catch (error) {
        // The read may still run after this gave up on it (no answer in time, a lost reply) and take
        // the lease under a token nobody holds: every other instance would wait out leaseMs. Given
        // up after it, on the same connection, so it goes whichever came to pass.
        run('release', RELEASE, [leaseKey], [token]).catch(() => {});
        throw error;
      }
      const [rawGeneration, rawLeased, rawAnswer, rawAge] = Array.isArray(reply) ? reply : [];
      const generation = replyText(rawGeneration);
      if (generation === undefined) throw unexpectedReply(`${OPERATION}.read`, reply);
      const leased = Number(rawLeased) === 1;
      if (leased) leases.remember(key, token, leaseMs, leaseKey);
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
      const base = of(account);
      const keys = [`${base}:a:${key}`, `${base}:l:${key}`, `${base}:g`, `${base}:k`];
      const token = leases.take(key)?.token ?? '';
      return Number(await run('write', WRITE, keys, [generation, json, life, token])) === 1;
    },

    async release(key) {
      checkArgs(`${OPERATION}.release`, [['key', [name], key]]);
      const lease = leases.take(key);
      // Not this instance's lease (never taken, or already given up): nothing of its own to give up.
      if (lease) await run('release', RELEASE, [lease.leaseKey], [lease.token]);
    },

    async invalidate(account) {
      checkArgs(`${OPERATION}.invalidate`, [['account', [name], account]]);
      // The account's slot first (answers gone from Redis), then the stream's: an instance told
      // before the answers were gone could read one back from Redis and keep it.
      const base = of(account);
      await run('invalidate', DROP, [`${base}:g`, `${base}:k`], [crypto.randomUUID(), GENERATION_MS]);
      await run('invalidate', NOTIFY, [meta, stream], [account, streamMaxLen, crypto.randomUUID()]);
    },

    watch: (listener, onError) =>
      watchInvalidations(
        { pollMs, poll: (args) => run('watch', POLL, [meta, stream], args) },
        listener,
        onError,
      ),
  };
}
