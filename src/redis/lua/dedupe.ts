/**
 * The Lua scripts of `redisDedupeStore`, one atomic step each. Every script works on one key, the
 * delivery id's (`KEYS[1]`), which holds `claim:<token>` while a delivery is processed and
 * {@link DONE} followed by that claim value once it was (`done:claim:<token>`): a `complete` run
 * twice then knows the mark is its own.
 *
 * @module
 */

/**
 * The start of an id's value once its delivery was processed (the claim value that completed it
 * follows). Claim values start with `claim:`, so no claim reads as done.
 */
export const DONE = 'done:';

/**
 * Claims an id unless it is done or claimed by another token. A missing key reads as false.
 * KEYS[1] the id's key. ARGV[1] the claim value, ARGV[2] the claim's TTL in ms.
 * Answers `'claimed'`, `'processing'` (another token holds it) or `'done'`.
 */
export const CLAIM = `local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, ${DONE.length}) == '${DONE}' then return 'done' end
if v and v ~= ARGV[1] then return 'processing' end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 'claimed'`;

/**
 * Extends a claim still held. KEYS[1] the id's key. ARGV[1] the claim value, ARGV[2] the new TTL in ms.
 * Answers 1 when the claim was held (and extended), else 0.
 */
export const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

/**
 * Marks the id done, held or not: the event was processed either way. KEYS[1] the id's key.
 * ARGV[1] the claim value, ARGV[2] how long the id stays done, in ms.
 * Answers 1 when the claim was still held (or this claim's own done mark is there: a run
 * repeated), 0 when it had expired or another token held it.
 */
export const COMPLETE = `local v = redis.call('GET', KEYS[1])
local held = v == ARGV[1] or v == '${DONE}' .. ARGV[1]
redis.call('SET', KEYS[1], '${DONE}' .. ARGV[1], 'PX', ARGV[2])
if held then return 1 end
return 0`;

/** Gives up a claim still held. KEYS[1] the id's key. ARGV[1] the claim value. Answers 0. */
export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;
