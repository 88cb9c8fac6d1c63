/**
 * `billing-sdk/redis`: the webhook dedupe store, the shared 429 cooldown and the shared store
 * of access answers (`createAccessCache`'s answers, leases and invalidations) on a Redis client the
 * application passes in, for several instances of one service. Nothing here imports a Redis
 * package: pass a connected node-redis client (`redis` on npm, v4 or v5), or adapt another client to
 * {@link RedisLike}.
 *
 * @module billing-sdk/redis
 */

export { type RedisAccessStoreOptions, redisAccessStore } from './access-store.js';
export type { RedisLike } from './client.js';
export { type RedisCooldownOptions, redisCooldown } from './cooldown.js';
export { type RedisDedupeStoreOptions, redisDedupeStore } from './dedupe-store.js';
export { type RedisSpoolOptions, redisSpool } from './spool.js';
