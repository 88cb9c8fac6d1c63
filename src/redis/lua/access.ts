/**
 * The Lua scripts of `redisAccessStore`, one atomic step each.
 *
 * Keys, each `<prefix>`, then a hash tag (keys.ts), then a family tag that no other family's tag
 * starts with, then the caller's string as is: whatever the string holds (':', spaces), the tags
 * alone say which family a key is of and the rest which key, so two families or two strings can
 * never share a key. An account's keys share the account's tag (`<prefix>{<account>}:`), so the
 * scripts on one account run in one slot of a Redis Cluster and accounts spread over its masters:
 * - `a:<key>`: the answer, JSON `{v, ttl, life}`, expiring after `life` ms
 * - `l:<key>`: the lease of one instance asking the service (a token, expiring after leaseMs)
 * - `g`: the account's generation, a hash: `e` (a random token, born with the hash) and `n`
 *   (invalidations so far, missing reads as 0)
 * - `k`: the set of the account's answer keys, so invalidate finds them all
 *
 * The invalidation stream and its counter share the store's own tag (`<prefix>{<prefix>}:`), the
 * one slot every instance polls:
 * - `meta`: a hash, `epoch` (a random token, born with the stream) and `n` (invalidations so far)
 * - `inv`: the stream of invalidations, fields `a` (account) and `n` (its number)
 *
 * No script mixes the two: `invalidate` runs {@link DROP} on the account, then {@link NOTIFY} on
 * the stream.
 *
 * A generation is `<e>:<n>`. The token `e` makes it safe across a Redis that lost the account's
 * hash (a restart without persistence, a failover, an eviction, its TTL): `n` starts again from 0
 * there, so a write whose read came before the loss could otherwise match a counter that several
 * invalidations since moved back to the same value. With a new `e` it matches nothing. So the hash
 * can expire: it lives at least a day, and as long as the account's newest answer.
 *
 * @module
 */

/**
 * Reads an answer, and takes the lease when there is no fresh one. Age is measured by Redis's
 * clock alone: `life` minus what PTTL says is left. An answer that does not parse (written by
 * something else) counts as none. Run twice with one token (a resend), it finds the lease its first
 * run took and answers leased again.
 * KEYS: answer, lease, generation. ARGV[1] leaseMs, ARGV[2] a fresh token (the lease's, and the
 * generation's `e` if there is none yet), ARGV[3] how long a new generation hash lives, in ms.
 * Answers `{generation, leased (0 | 1), the answer's JSON or false, its age in ms}`.
 */
export const READ = `local epoch = redis.call('HGET', KEYS[3], 'e')
if not epoch then
  epoch = ARGV[2]
  redis.call('HSET', KEYS[3], 'e', epoch)
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
local generation = epoch .. ':' .. (redis.call('HGET', KEYS[3], 'n') or '0')
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
if not fresh then
  local holder = redis.call('GET', KEYS[2])
  if holder == ARGV[2] or (not holder and redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[1])) then leased = 1 end
end
return {generation, leased, raw, age}`;

/**
 * Stores an answer if the generation it was read at is still current. The lease goes first,
 * whatever happens: the service answered, so another instance may ask (anew, when an invalidation
 * refused this answer). The index and the generation live at least as long as the newest answer.
 * Run twice, it stores the same answer again (or refuses it, if an invalidation came between).
 * KEYS: answer, lease, generation, index. ARGV[1] the generation read, ARGV[2] the answer's
 * JSON, ARGV[3] lifeMs, ARGV[4] the lease token (`''` when this instance holds none).
 * Answers 1 when stored, 0 when refused.
 */
export const WRITE = `if ARGV[4] ~= '' and redis.call('GET', KEYS[2]) == ARGV[4] then redis.call('DEL', KEYS[2]) end
local epoch = redis.call('HGET', KEYS[3], 'e')
if not epoch or epoch .. ':' .. (redis.call('HGET', KEYS[3], 'n') or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SADD', KEYS[4], KEYS[1])
if redis.call('PTTL', KEYS[4]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[4], ARGV[3]) end
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[3], ARGV[3]) end
return 1`;

/**
 * Gives up a lease, only the holder's own: after it expired, another may hold it.
 * KEYS[1] the lease. ARGV[1] the token. Answers 0.
 */
export const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * The account's half of an invalidation: moves it to a new generation and drops its answers (all
 * in its slot: the index lists keys of the account's tag). DEL goes in slices: Lua's unpack has a
 * limit on how many values it spreads. Run twice, it invalidates twice: as good as once.
 * KEYS: generation, index. ARGV[1] a token for a missing `e`, ARGV[2] how long a new generation
 * hash lives at least, in ms. Answers the account's invalidation count.
 */
export const DROP = `if not redis.call('HGET', KEYS[1], 'e') then redis.call('HSET', KEYS[1], 'e', ARGV[1]) end
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local keys = redis.call('SMEMBERS', KEYS[2])
for i = 1, #keys, 500 do redis.call('DEL', unpack(keys, i, math.min(i + 499, #keys))) end
redis.call('DEL', KEYS[2])
return n`;

/**
 * The stream's half of an invalidation, after {@link DROP}: tells every instance. Run twice, it
 * tells them twice: each drops the account's answers again, nothing more.
 * KEYS: meta, stream. ARGV[1] the account, ARGV[2] the stream's MAXLEN (~), ARGV[3] a token for a
 * missing epoch. Answers the invalidation's number.
 */
export const NOTIFY = `if not redis.call('HGET', KEYS[1], 'epoch') then redis.call('HSET', KEYS[1], 'epoch', ARGV[3]) end
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'a', ARGV[1], 'n', n)
return n`;

/**
 * One poll of a watch, as one snapshot: the epoch, the invalidation count, the newest id and the
 * entries after the cursor agree with each other. XREAD without BLOCK: a blocking read would hold
 * the application's shared connection.
 * KEYS: meta, stream. ARGV[1] a token for a missing epoch, ARGV[2] the cursor (`''` to only learn
 * where the stream is), ARGV[3] how many entries at most.
 * Answers `{epoch, n, newest id ('0-0' when empty), XREAD's reply or false}`.
 */
export const POLL = `local epoch = redis.call('HGET', KEYS[1], 'epoch')
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
