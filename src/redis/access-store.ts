import type { AccessStore, AccessStoreRead } from '../access/store.js';
import { BillingError, InvalidRequestError, type InvalidRequestIssue } from '../core/errors.js';
import {
  check,
  checkOptions,
  integer,
  positiveNumber,
  type Rule,
  redisClient,
  required,
  text,
} from '../internal/checks.js';
import { isWellFormed } from '../util/well-formed.js';
import { evalScript, px, type RedisLike } from './client.js';

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

// Keys, each `<prefix>` then a tag that no other family's tag starts with, then the caller's
// string as is: whatever the string holds (':', spaces), the tag alone says which family a key is
// of and the rest which key, so two families or two strings can never share a key.
//   a:<key>      the answer: JSON {v, ttl, life}, expiring after life ms
//   l:<key>      the lease of one instance asking the service (a token, expiring after leaseMs)
//   g:<account>  the account's invalidation counter (missing reads as 0)
//   k:<account>  the set of the account's answer keys, so invalidate finds them all
//   meta         hash: `epoch` (a random token, born with the data set) and `n` (invalidations so far)
//   inv          the stream of invalidations: fields a (account) and n (its number)
//
// A generation is `<epoch>:<counter>`. The epoch makes it safe across a Redis that lost its data
// (a restart without persistence, a failover): counters start again from 0 there, so a write whose
// read came before the loss could otherwise match a counter that several invalidations since moved
// back to the same value. With a new epoch it matches nothing.

// KEYS: answer, lease, counter, meta. ARGV: leaseMs, a fresh token (the lease's, and the epoch's
// if there is none yet). Age is measured by Redis's clock alone: life minus what PTTL says is left.
// An answer that does not parse (written by something else) counts as none.
const READ = `local epoch = redis.call('HGET', KEYS[4], 'epoch')
if not epoch then
  epoch = ARGV[2]
  redis.call('HSET', KEYS[4], 'epoch', epoch)
end
local generation = epoch .. ':' .. (redis.call('GET', KEYS[3]) or '0')
local raw = redis.call('GET', KEYS[1])
local age = 0
local fresh = false
if raw then
  local ok, answer = pcall(cjson.decode, raw)
  local left = redis.call('PTTL', KEYS[1])
  if ok and type(answer) == 'table' and type(answer.ttl) == 'number' and type(answer.life) == 'number' and left >= 0 then
    age = math.max(0, answer.life - left)
    fresh = age < answer.ttl
  else
    raw = false
  end
end
local leased = 0
if not fresh and redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[1]) then leased = 1 end
return {generation, leased, raw, age}`;

// KEYS: answer, lease, counter, meta, index. ARGV: the generation read, the answer's JSON, lifeMs,
// the lease token ('' when this instance holds none). The lease goes first, whatever happens: the
// service answered, so another instance may ask (anew, when an invalidation refused this answer).
// The index lives at least as long as its newest answer, then goes by itself.
const WRITE = `if ARGV[4] ~= '' and redis.call('GET', KEYS[2]) == ARGV[4] then redis.call('DEL', KEYS[2]) end
local epoch = redis.call('HGET', KEYS[4], 'epoch')
if not epoch or epoch .. ':' .. (redis.call('GET', KEYS[3]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SADD', KEYS[5], KEYS[1])
if redis.call('PTTL', KEYS[5]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[5], ARGV[3]) end
return 1`;

// KEYS: lease. ARGV: the token. Only the holder's own lease: after it expired, another holds it.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

// KEYS: counter, index, meta, stream. ARGV: account, streamMaxLen, a token for a missing epoch.
// DEL in slices: Lua's unpack has a limit on how many values it spreads.
const INVALIDATE = `if not redis.call('HGET', KEYS[3], 'epoch') then redis.call('HSET', KEYS[3], 'epoch', ARGV[3]) end
redis.call('INCR', KEYS[1])
local keys = redis.call('SMEMBERS', KEYS[2])
for i = 1, #keys, 500 do redis.call('DEL', unpack(keys, i, math.min(i + 499, #keys))) end
redis.call('DEL', KEYS[2])
local n = redis.call('HINCRBY', KEYS[3], 'n', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[2], '*', 'a', ARGV[1], 'n', n)
return n`;

// KEYS: meta, stream. ARGV: a token for a missing epoch, the cursor ('' to only learn where the
// stream is), how many entries at most. One snapshot: the epoch, the invalidation count, the
// newest id and the entries after the cursor agree with each other. XREAD without BLOCK: a blocking
// read would hold the application's shared connection.
const POLL = `local epoch = redis.call('HGET', KEYS[1], 'epoch')
if not epoch then
  epoch = ARGV[1]
  redis.call('HSET', KEYS[1], 'epoch', epoch)
end
local n = redis.call('HGET', KEYS[1], 'n') or '0'
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local lastId = '0-0'
if last[1] then lastId = last[1][1] end
local entries = false
if ARGV[2] ~= '' then entries = redis.call('XREAD', 'COUNT', ARGV[3], 'STREAMS', KEYS[2], ARGV[2]) end
return {epoch, n, lastId, entries}`;

/** Entries read per poll; a full batch is followed by another poll at once. */
const BATCH = 1_000;
/** While Redis fails, a watcher asks this seldom, so an outage costs one error a second, not forty. */
const BACKOFF_MS = 1_000;

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
const duration: Rule = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? undefined : 'must be a finite number of ms > 0';

/** Throws one {@link InvalidRequestError} listing every bad argument of a store method. */
function verify(operation: string, args: [field: string, rule: Rule, value: unknown][]): void {
  const issues: InvalidRequestIssue[] = [];
  for (const [field, rule, value] of args) {
    const message = rule(value);
    if (typeof message === 'string') issues.push({ field, message });
  }
  if (issues.length) throw new InvalidRequestError(`${OPERATION}.${operation}`, issues);
}

/** A reply string as node-redis gives it, or as a Buffer for a client set to return buffers. */
function str(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return undefined;
}

function unexpected(operation: string, reply: unknown): BillingError {
  return new BillingError(
    `${OPERATION}.${operation}: unexpected Redis reply ${JSON.stringify(reply)?.slice(0, 200)}`,
  );
}

/**
 * What a method rejects with (and a watch tells `onError`) when Redis fails, is slow or answers
 * oddly: a {@link BillingError} naming the step, the client's own error as its `cause`, so callers
 * meet one error family whichever Redis client is passed in.
 */
function failure(operation: string, error: unknown): BillingError {
  if (error instanceof BillingError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new BillingError(`${OPERATION}.${operation}: Redis failed: ${message}`, { cause: error });
}

/** Calls `fn` and swallows its throw: a broken reporter must not stop the watch. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // Reporting never changes what the store does.
  }
}

/** One invalidation read from the stream: its id, account and number (NaN when missing). */
interface Entry {
  id: string;
  account: string | undefined;
  n: number;
}

/** XREAD's reply `[[stream, [[id, [field, value, ...]], ...]]]` (or null) as entries. */
function parseEntries(reply: unknown): Entry[] {
  if (reply == null || reply === false) return [];
  const streams = Array.isArray(reply) ? reply : [];
  const items = Array.isArray(streams[0]) && Array.isArray(streams[0][1]) ? (streams[0][1] as unknown[]) : [];
  return items.map((item) => {
    const [rawId, rawFields] = Array.isArray(item) ? item : [];
    const id = str(rawId);
    if (id === undefined) throw unexpected('watch', reply);
    const fields = Array.isArray(rawFields) ? rawFields.map(str) : [];
    let account: string | undefined;
    let n = Number.NaN;
    for (let i = 0; i + 1 < fields.length; i += 2) {
      if (fields[i] === 'a') account = fields[i + 1];
      else if (fields[i] === 'n') n = Number(fields[i + 1]);
    }
    return { id, account, n };
  });
}

/** The timer's `unref` where there is one (Node, Deno, Bun): a watch never keeps a process alive. */
function later(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
  const timer = setTimeout(fn, ms);
  (timer as { unref?: () => void }).unref?.();
  return timer;
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
 * When Redis is down or slow, every method rejects within `timeoutMs` and the cache goes on with
 * its own memory and the service (told to its `onError`). Use a Redis that does not evict keys
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
      throw failure(operation, error);
    });

  // The contract passes no lease token to write and release, so the store remembers the tokens of
  // the leases it took: releasing then never deletes a lease that expired and another instance took
  // since. Entries go on write or release; the sweep only bounds a caller that does neither.
  const leases = new Map<string, { token: string; until: number }>();
  let sweepAt = 1_024;
  const remember = (key: string, token: string, leaseMs: number) => {
    if (leases.size >= sweepAt) {
      const now = Date.now();
      for (const [k, lease] of leases) if (lease.until < now) leases.delete(k);
      sweepAt = Math.max(1_024, leases.size * 2);
    }
    leases.set(key, { token, until: Date.now() + leaseMs });
  };
  const takeLease = (key: string): string => {
    const lease = leases.get(key);
    leases.delete(key);
    return lease?.token ?? '';
  };

  return {
    async read(key, account, leaseMs): Promise<AccessStoreRead> {
      verify('read', [
        ['key', name, key],
        ['account', name, account],
        ['leaseMs', duration, leaseMs],
      ]);
      const token = crypto.randomUUID();
      const reply = await run(
        'read',
        READ,
        [`${prefix}a:${key}`, `${prefix}l:${key}`, `${prefix}g:${account}`, meta],
        [px(leaseMs), token],
      );
      const [rawGeneration, rawLeased, rawAnswer, rawAge] = Array.isArray(reply) ? reply : [];
      const generation = str(rawGeneration);
      if (generation === undefined) throw unexpected('read', reply);
      const leased = Number(rawLeased) === 1;
      if (leased) remember(key, token, leaseMs);
      const json = str(rawAnswer);
      if (json === undefined) return { generation, leased };
      let stored: { v?: unknown; ttl: number };
      try {
        stored = JSON.parse(json);
      } catch {
        throw unexpected('read', json);
      }
      return { answer: { value: stored.v, ageMs: Number(rawAge), ttlMs: stored.ttl }, generation, leased };
    },

    async write(key, account, generation, value, ttlMs, lifeMs) {
      verify('write', [
        ['key', name, key],
        ['account', name, account],
        ['generation', name, generation],
        ['ttlMs', duration, ttlMs],
        ['lifeMs', duration, lifeMs],
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
      return Number(await run('write', WRITE, keys, [generation, json, life, takeLease(key)])) === 1;
    },

    async release(key) {
      verify('release', [['key', name, key]]);
      const token = takeLease(key);
      // Not this instance's lease (never taken, or already given up): nothing of its own to give up.
      if (token) await run('release', RELEASE, [`${prefix}l:${key}`], [token]);
    },

    async invalidate(account) {
      verify('invalidate', [['account', name, account]]);
      await run(
        'invalidate',
        INVALIDATE,
        [`${prefix}g:${account}`, `${prefix}k:${account}`, meta, stream],
        [account, streamMaxLen, crypto.randomUUID()],
      );
    },

    watch(listener, onError) {
      let stopped = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      // Where the watch is: the data set's epoch, the id and number of the last invalidation seen.
      let epoch: string | undefined;
      let cursor = '0-0';
      let seen = 0;
      // Invalidations sent while the first poll failed happened after watch() was called, and
      // nothing tells which: once the first poll succeeds, the listener hears they may be missed.
      let failedBeforeStart = false;

      const tell = (account: string | undefined) => {
        try {
          listener(account);
        } catch (error) {
          safely(() => onError(error));
        }
      };

      /** One poll; resolves true when a full batch came (more may be waiting). */
      const poll = async (): Promise<boolean> => {
        const reply = await run(
          'watch',
          POLL,
          [meta, stream],
          [crypto.randomUUID(), epoch === undefined ? '' : cursor, BATCH],
        );
        const [rawEpoch, rawN, rawLast, rawEntries] = Array.isArray(reply) ? reply : [];
        const now = str(rawEpoch);
        const n = Number(str(rawN) ?? rawN);
        const lastId = str(rawLast);
        if (now === undefined || lastId === undefined || !Number.isSafeInteger(n)) {
          throw unexpected('watch', reply);
        }
        if (now !== epoch) {
          // The first poll, or Redis lost its data (restart, failover) with whatever invalidations
          // it held: start from where the stream is now, everything before it being unknown.
          const restarted = epoch !== undefined || failedBeforeStart;
          epoch = now;
          cursor = lastId;
          seen = n;
          if (restarted) tell(undefined);
          return false;
        }
        const entries = parseEntries(rawEntries);
        let lost = false;
        const accounts: string[] = [];
        for (const entry of entries) {
          // Invalidations are numbered 1, 2, 3…: a jump means the stream was trimmed past the cursor.
          if (entry.n !== seen + 1 || entry.account === undefined) lost = true;
          else accounts.push(entry.account);
          seen = Number.isSafeInteger(entry.n) ? entry.n : seen;
          cursor = entry.id;
        }
        const full = entries.length >= BATCH;
        // Every entry up to now was read, yet the count differs: some were deleted unread (the
        // stream was trimmed to nothing past the cursor, or deleted).
        if (!full && seen !== n) {
          lost = true;
          seen = n;
          cursor = lastId;
        }
        if (lost) tell(undefined);
        else for (const account of accounts) tell(account);
        return full;
      };

      const loop = async () => {
        if (stopped) return;
        let delay = pollMs;
        try {
          if (await poll()) delay = 0;
        } catch (error) {
          if (epoch === undefined) failedBeforeStart = true;
          delay = Math.max(pollMs, BACKOFF_MS);
          if (!stopped) safely(() => onError(failure('watch', error)));
        }
        if (!stopped) timer = later(loop, delay);
      };
      timer = later(loop, 0);

      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    },
  };
}
