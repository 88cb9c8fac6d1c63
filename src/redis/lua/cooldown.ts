/**
 * The Lua scripts of `redisCooldown`, one atomic step each. Every script gets the same three keys,
 * which share one hash tag (keys.ts):
 * - KEYS[1] `wait`: exists while a Retry-After window runs; its PTTL is the wait.
 * - KEYS[2] `cooling`: a 429 came and no probe has been answered since.
 * - KEYS[3] `probe`: the prober's token, under a lease (PX).
 *
 * @module
 */

/**
 * Asks whether a request may go. ARGV[1] a fresh token, ARGV[2] the probe's lease in ms. Run
 * twice with one token (a resend), it finds the lease its first run took and answers probe again.
 * Answers `{'wait', ms}` (a window runs), `{'free'}` (no cooldown), `{'probe'}` (this request is the
 * probe, its token now holds the lease) or `{'held', ms}` (another probe is out; its lease's PTTL).
 */
export const ACQUIRE = `local wait = redis.call('PTTL', KEYS[1])
if wait > 0 then return {'wait', wait} end
if redis.call('EXISTS', KEYS[2]) == 0 then return {'free'} end
if redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'probe'} end
if redis.call('GET', KEYS[3]) == ARGV[1] then return {'probe'} end
return {'held', redis.call('PTTL', KEYS[3])}`;

/**
 * A 429 with Retry-After. ARGV[1] retryAfterMs, ARGV[2] the probe's token (`''` for other
 * requests), ARGV[3] the cooling key's TTL in ms. A window only grows: a shorter Retry-After does
 * not cut one already running. Answers 1.
 */
export const COOL = `local ms = tonumber(ARGV[1])
if ms > 0 and redis.call('PTTL', KEYS[1]) < ms then redis.call('SET', KEYS[1], '1', 'PX', ms) end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
if ARGV[2] ~= '' and redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return 1`;

/**
 * The probe was not refused: the cooldown is over, unless a newer 429 opened another window
 * meanwhile. ARGV[1] the probe's token (only its own lease is given up). Answers 1.
 */
export const END = `if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
if redis.call('PTTL', KEYS[1]) <= 0 then redis.call('DEL', KEYS[2]) end
return 1`;
