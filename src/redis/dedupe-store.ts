import { check, checkOptionsObject, redisClient, required } from '../internal/checks.js';
import type { ClaimOutcome, DedupeStore } from '../webhooks/dedupe.js';
import { evalScript, px, type RedisLike } from './client.js';

/** Options of {@link redisDedupeStore}. */
export interface RedisDedupeStoreOptions {
  /** Start of every key, one per `transaction_id`; default `'billing-sdk:webhook:'`. */
  prefix?: string | undefined;
  /**
   * How long a processed id is remembered, in ms: longer than the sender keeps retrying a delivery.
   * Default 7 days.
   */
  doneTtlMs?: number | undefined;
  /**
   * How long to wait for Redis before the call fails (and the handler answers 500, so the sender
   * retries), in ms. Default 2 000.
   */
  timeoutMs?: number | undefined;
}

const DONE = 'done';
/** Claim values carry a prefix, so no token can ever read as `done`. */
const claimValue = (token: string): string => `claim:${token}`;

// KEYS[1] the id's key; ARGV[1] the claim value, ARGV[2] its TTL. A missing key reads as false.
const CLAIM = `local v = redis.call('GET', KEYS[1])
if v == '${DONE}' then return 'done' end
if v and v ~= ARGV[1] then return 'processing' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 'claimed'`;

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

// ARGV[2] is how long the id stays done.
const COMPLETE = `local held = redis.call('GET', KEYS[1]) == ARGV[1]
redis.call('SET', KEYS[1], '${DONE}', 'PX', ARGV[2])
if held then return 1 end
return 0`;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

const OUTCOMES: readonly unknown[] = ['claimed', 'processing', 'done'] satisfies ClaimOutcome[];

/**
 * A {@link DedupeStore} in Redis, for several instances receiving webhooks: each step is one Lua
 * script, so two instances given the same delivery at the same moment cannot both claim it. Claims
 * expire through Redis's own clock (PX), so instances with skewed clocks still agree. Keys:
 * `<prefix><transaction_id>`, holding `claim:<token>` while claimed and `done` once processed.
 *
 * Pass it as the `dedupe` option of `createWebhookHandler` or `createNodeWebhookHandler`. When
 * Redis is down or slow, every method rejects and the handler answers 500 without running
 * `onEvent`: the sender retries later.
 *
 * @param client - A connected node-redis client (`createClient()` from `redis`), or any
 * {@link RedisLike}. It is not closed here: the application owns it.
 * @throws {@link billing-sdk!InvalidRequestError} when `client` has no `sendCommand`, or `options`
 * is not a plain object.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { createNodeWebhookHandler } from 'billing-sdk';
 * import { redisDedupeStore } from 'billing-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const handler = createNodeWebhookHandler({ onEvent, dedupe: redisDedupeStore(redis) });
 * ```
 */
export function redisDedupeStore(client: RedisLike, options: RedisDedupeStoreOptions = {}): DedupeStore {
  check('redisDedupeStore', { client }, { client: [required, redisClient] });
  checkOptionsObject('redisDedupeStore', options);
  const prefix = options.prefix ?? 'billing-sdk:webhook:';
  const doneTtlMs = px(options.doneTtlMs ?? 7 * 24 * 60 * 60 * 1000);
  const timeoutMs = options.timeoutMs ?? 2_000;
  const run = (script: string, id: string, args: (string | number)[]) =>
    evalScript(client, script, [prefix + id], args, timeoutMs);
  return {
    async claim(id, token, ttlMs) {
      const reply = await run(CLAIM, id, [claimValue(token), px(ttlMs)]);
      if (!OUTCOMES.includes(reply))
        throw new TypeError(`unexpected Redis reply to a claim: ${String(reply)}`);
      return reply as ClaimOutcome;
    },
    async renew(id, token, ttlMs) {
      return Number(await run(RENEW, id, [claimValue(token), px(ttlMs)])) === 1;
    },
    async complete(id, token) {
      return Number(await run(COMPLETE, id, [claimValue(token), doneTtlMs])) === 1;
    },
    async release(id, token) {
      await run(RELEASE, id, [claimValue(token)]);
    },
  };
}
