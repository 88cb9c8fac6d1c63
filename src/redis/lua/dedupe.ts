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
 * ARGV[1] the claim value, ARGV[2] how long the id stays done, in ms, ARGV[3] (optional) an answer
 * kept after the mark and a newline, in the one key, so it lives and goes with the mark (claim
 * values are `claim:` and an SDK-made UUID, the gate's answers JSON: neither holds a raw newline).
 * Answers 1 when the claim was still held (or this claim's own done mark is there: a run
 * repeated), 0 when it had expired or another token held it.
 */
export const COMPLETE = `local v = redis.call('GET', KEYS[1])
local mark = '${DONE}' .. ARGV[1]
if ARGV[3] then mark = mark .. '\\n' .. ARGV[3] end
local held = v == ARGV[1] or v == mark or v == '${DONE}' .. ARGV[1]
redis.call('SET', KEYS[1], mark, 'PX', ARGV[2])
if held then return 1 end
return 0`;

/**
 * The answer kept with a done mark. KEYS[1] the id's key. Answers it, or false (nil) when the id
 * is not done or was marked without one.
 */
export const ANSWER = `local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, ${DONE.length}) ~= '${DONE}' then return false end
local at = string.find(v, '\\n', 1, true)
if not at then return false end
return string.sub(v, at + 1)`;

/** Gives up a claim still held. KEYS[1] the id's key. ARGV[1] the claim value. Answers 0. */
export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;
