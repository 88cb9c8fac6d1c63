/**
 * `billing-sdk/redis`: the webhook dedupe store and the shared rate-limit cooldown on a Redis client
 * the application passes in, for several instances of one service.
 *
 * @module billing-sdk/redis
 */

export {};
