/**
 * `billing-sdk/redis`: what several instances of one service share through Redis: the webhook
 * dedupe store (`redisDedupeStore`), the shared 429 cooldown (`redisCooldown`), the store of access
 * answers (`redisAccessStore`: `createAccessCache`'s answers, leases and invalidations), the store
 * of prepaid-credit holds (`redisHoldStore`: `createCreditHolds`' balances and reservations) and the
 * durable spool of the usage tracker (`redisSpool`), on a Redis client the application passes in.
 * Nothing here imports a Redis package: pass a connected client as it is, node-redis (`redis` on
 * npm, v4 or v5: `createClient()` or `createCluster()`) or ioredis (v5 or later: `new Redis()` or
 * `new Cluster()`), recognised by their shapes ({@link RedisClient}), or adapt another client to
 * {@link RedisLike}. Every part runs on one Redis node or on a Redis Cluster with its default
 * options: the keys of each atomic step share one hash tag the SDK chooses.
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
export type { ServiceScoped } from '../util/service-namespace.js';
export { type RedisAccessStoreOptions, redisAccessStore } from './access-store.js';
export type { IoRedisLike, NodeRedisClusterLike, RedisClient, RedisLike } from './adapt.js';
export { type RedisCooldownOptions, redisCooldown } from './cooldown.js';
export { type RedisDedupeStoreOptions, redisDedupeStore } from './dedupe-store.js';
export { type RedisHoldStoreOptions, redisHoldStore } from './hold-store.js';
export { type RedisSpoolOptions, redisSpool } from './spool.js';
