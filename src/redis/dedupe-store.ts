import { check, checkOptionsObject, redisClient, required } from '../internal/checks.js';
import type { ClaimOutcome, DedupeStore } from '../webhooks/dedupe.js';
import { evalScript, px, type RedisLike } from './client.js';
import { CLAIM, COMPLETE, RELEASE, RENEW } from './lua/dedupe.js';
import { storeFailure, unexpectedReply } from './store-errors.js';

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

/** Claim values carry a prefix, so no token can ever read as `done`. */
const claimValue = (token: string): string => `claim:${token}`;

const OUTCOMES: readonly unknown[] = ['claimed', 'processing', 'done'] satisfies ClaimOutcome[];

/**
 * A {@link DedupeStore} in Redis, for several instances receiving webhooks: each step is one Lua
 * script, so two instances given the same delivery at the same moment cannot both claim it. Claims
 * expire through Redis's own clock (PX), so instances with skewed clocks still agree. Keys:
 * `<prefix><transaction_id>`, holding `claim:<token>` while claimed and `done` once processed.
 *
 * Pass it as the `dedupe` option of `createWebhookHandler` or `createNodeWebhookHandler`. When
 * Redis is down or slow, every method rejects with a {@link billing-sdk!StoreError} (code
 * `'unavailable'`, or `'unexpected_reply'` when Redis answers what the store never writes) and the
 * handler answers 500 without running `onEvent`, telling its `onError`: the sender retries later.
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
  const run = (step: string, script: string, id: string, args: (string | number)[]) =>
    evalScript(client, script, [prefix + id], args, timeoutMs).catch((error: unknown) => {
      throw storeFailure(`redisDedupeStore.${step}`, error);
    });
  return {
    async claim(id, token, ttlMs) {
      const reply = await run('claim', CLAIM, id, [claimValue(token), px(ttlMs)]);
      if (!OUTCOMES.includes(reply)) throw unexpectedReply('redisDedupeStore.claim', reply);
      return reply as ClaimOutcome;
    },
    async renew(id, token, ttlMs) {
      return Number(await run('renew', RENEW, id, [claimValue(token), px(ttlMs)])) === 1;
    },
    async complete(id, token) {
      return Number(await run('complete', COMPLETE, id, [claimValue(token), doneTtlMs])) === 1;
    },
    async release(id, token) {
      await run('release', RELEASE, id, [claimValue(token)]);
    },
  };
}
