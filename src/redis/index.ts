/**
 * `billing-sdk/redis`: what several instances of one service share through Redis: the webhook
 * dedupe store (`redisDedupeStore`), the shared 429 cooldown (`redisCooldown`), the store of access
 * answers (`redisAccessStore`: `createAccessCache`'s answers, leases and invalidations) and the
 * durable spool of the usage tracker (`redisSpool`), on a Redis client the application passes in.
 * Nothing here imports a Redis package: pass a connected node-redis client (`redis` on npm, v4 or
 * v5), or adapt another client to {@link RedisLike}.
 *
 * Every failure is typed: the stores reject (and tell `onError`) with a {@link StoreError}, the
 * spool with a {@link SpoolError}, each with a `code`; the Redis client's own error is the `cause`.
 *
 * @module billing-sdk/redis
 */

export {
  SpoolError,
  type SpoolErrorCode,
  StoreError,
  type StoreErrorCode,
} from '../core/errors/index.js';
export { type RedisAccessStoreOptions, redisAccessStore } from './access-store.js';
export type { RedisLike } from './client.js';
export { type RedisCooldownOptions, redisCooldown } from './cooldown.js';
export { type RedisDedupeStoreOptions, redisDedupeStore } from './dedupe-store.js';
export { type RedisSpoolOptions, redisSpool } from './spool.js';
