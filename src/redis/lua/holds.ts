/**
 * The Lua scripts of `redisHoldStore`, one atomic step each, answering as `memoryHoldStore` does
 * (src/credits/store.ts states the rules).
 *
 * Every key of an account carries the account's hash tag (`<prefix>{<account>}`, keys.ts), so each
 * script runs in one slot of a Redis Cluster and accounts spread over its masters:
 * - KEYS[1] `a`: the account's hash. `t`: a random token, born with the hash; `e`: the account's
 *   epoch (invalidations so far, missing reads as 0); and per ledger `L` (its `ledgerKey`, the
 *   JSON of its three names, which no two ledgers share): `b:L` the known balance, `r:L` when it was
 *   read (Redis's clock, ms), `v:L` the epoch it was read at, `d:L` the credits settles debited so
 *   far (a read is lowered by what was debited since its fence). A balance is
 *   fresh while `v:L` is the current epoch and `r:L` is younger than balanceTtlMs: invalidating an
 *   account is one HINCRBY, whatever its ledgers.
 * - KEYS[2] `h:L`: the ledger's holds, a hash of id → `<quantity>:<expiresAt>`; a step reads only
 *   the holds of its own ledger.
 *
 * A fence is `<t>:<e>:d<d>`. The token makes it safe across a Redis that lost the hash (a restart
 * without persistence, a failover, its expiry): the epoch and debits start again from 0 there, and a
 * balance read before the loss must not pass for fresh. So the keys can expire: each write sets
 * them to live at least a day (plus the hold's ttl), and an abandoned account goes away.
 *
 * Time is Redis's (TIME), never the caller's: instances whose clocks disagree agree on expiries.
 * Numbers go back into Redis as the strings they came in (or `%.0f`): Lua's own `tostring` keeps
 * only 14 digits.
 *
 * @module
 */

/** Redis's time in ms, as `now`. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** Makes key `k` live at least `ms` (never shortens a longer life a hold gave it). */
const KEEP = `local function keep(k, ms)
  if redis.call('PTTL', k) < ms then redis.call('PEXPIRE', k, ms) end
end
`;

/**
 * Reads one hold's `<quantity>:<expiresAt>`; a value of another shape (not written here) is an
 * error rather than a hold that counts as nothing.
 */
const PARSE = `local function parse(id, v)
  local q, x = string.match(v, '^(%d+):(%d+)$')
  if not q then return error('billing-sdk: hold ' .. id .. ' is not a hold: ' .. v) end
  return tonumber(q), tonumber(x)
end
`;

/**
 * Drops the ledger's expired holds, then grants `hold` when the balance is fresh and, minus every
 * unexpired hold, covers it. Run twice with one id (a resend), it finds its hold and answers
 * granted again, counting it once.
 * KEYS: account, holds. ARGV[1] the ledger `L`, ARGV[2] the hold's id, ARGV[3] its quantity,
 * ARGV[4] its ttl in ms, ARGV[5] balanceTtlMs, ARGV[6] a token for a hash without one, ARGV[7]
 * how long the keys live at least, in ms.
 * Answers `{'granted' | 'refused', available, expired}` or `{'stale', fence, expired}`.
 */
export const RESERVE = `${NOW}${KEEP}${PARSE}local L = ARGV[1]
local expired, held, mine = 0, 0, false
local holds = redis.call('HGETALL', KEYS[2])
for i = 1, #holds, 2 do
  local q, x = parse(holds[i], holds[i + 1])
  if x <= now then
    redis.call('HDEL', KEYS[2], holds[i])
    expired = expired + 1
  else
    held = held + q
    if holds[i] == ARGV[2] then mine = true end
  end
end
local token = redis.call('HGET', KEYS[1], 't')
if not token then
  token = ARGV[6]
  redis.call('HSET', KEYS[1], 't', token)
end
keep(KEYS[1], tonumber(ARGV[7]))
local epoch = redis.call('HGET', KEYS[1], 'e') or '0'
local f = redis.call('HMGET', KEYS[1], 'b:' .. L, 'r:' .. L, 'v:' .. L, 'd:' .. L)
if mine then return {'granted', math.max(0, tonumber(f[1] or '0') - held), expired} end
if not f[1] or not f[2] or f[3] ~= epoch or now - tonumber(f[2]) >= tonumber(ARGV[5]) then
  return {'stale', token .. ':' .. epoch .. ':d' .. (f[4] or '0'), expired}
end
local available = tonumber(f[1]) - held
local quantity = tonumber(ARGV[3])
if available < quantity then return {'refused', math.max(0, available), expired} end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. ':' .. string.format('%.0f', now + tonumber(ARGV[4])))
keep(KEYS[1], tonumber(ARGV[7]) + tonumber(ARGV[4]))
keep(KEYS[2], tonumber(ARGV[7]) + tonumber(ARGV[4]))
return {'granted', available - quantity, expired}`;

/**
 * Records a balance read after a stale answer with `fence`: when only settles came since (same
 * token and epoch), the read less what they debited since the fence (it may predate them), fresh;
 * never the balance known before, which may predate a top-up. When the account was invalidated (or
 * its hash lost) meanwhile, or the fence is not of this form: the lower of the two, still stale.
 * KEYS: account. ARGV[1] the ledger `L`, ARGV[2] the balance, ARGV[3] the fence, ARGV[4] how long
 * the key lives at least, in ms. Answers 1.
 */
export const SET_BALANCE = `${NOW}${KEEP}local L = ARGV[1]
local epoch = redis.call('HGET', KEYS[1], 'e') or '0'
local head = (redis.call('HGET', KEYS[1], 't') or '') .. ':' .. epoch
local debited = tonumber(redis.call('HGET', KEYS[1], 'd:' .. L) or '0')
local fenceHead, fenceDebited = string.match(ARGV[3], '^(.*):d(%d+)$')
if fenceHead == head and tonumber(fenceDebited) <= debited then
  local balance = string.format('%.0f', tonumber(ARGV[2]) - (debited - tonumber(fenceDebited)))
  redis.call('HSET', KEYS[1], 'b:' .. L, balance, 'r:' .. L, string.format('%.0f', now), 'v:' .. L, epoch)
else
  local balance = ARGV[2]
  local known = redis.call('HGET', KEYS[1], 'b:' .. L)
  if known and tonumber(known) < tonumber(balance) then balance = known end
  redis.call('HSET', KEYS[1], 'b:' .. L, balance)
end
keep(KEYS[1], tonumber(ARGV[4]))
return 1`;

/**
 * Drops the hold ARGV[2]; `held` is whether it was there unexpired. The head of
 * {@link SETTLE} and {@link RELEASE}.
 */
const FREE = `${NOW}${PARSE}local L = ARGV[1]
local held = 0
local v = redis.call('HGET', KEYS[2], ARGV[2])
if v then
  local _, x = parse(ARGV[2], v)
  if x > now then held = 1 end
  redis.call('HDEL', KEYS[2], ARGV[2])
end
`;

/**
 * Drops the hold after its debit was answered, counts what it debited (a balance read in flight is
 * then lowered by it), and lowers the balance to the debit's remaining balance.
 * KEYS: account, holds. ARGV[1] the ledger `L`, ARGV[2] the hold's id, ARGV[3] the remaining
 * balance, ARGV[4] how long the key lives at least, in ms, ARGV[5] what the debit took.
 * Answers `{held (0 | 1), the balance or nil}`.
 */
export const SETTLE = `${FREE}${KEEP}redis.call('HINCRBY', KEYS[1], 'd:' .. L, ARGV[5])
local known = redis.call('HGET', KEYS[1], 'b:' .. L)
if known and tonumber(ARGV[3]) < tonumber(known) then
  known = ARGV[3]
  redis.call('HSET', KEYS[1], 'b:' .. L, known)
end
keep(KEYS[1], tonumber(ARGV[4]))
return {held, known}`;

/**
 * Drops the hold without a debit.
 * KEYS: account, holds. ARGV[1] the ledger `L`, ARGV[2] the hold's id.
 * Answers `{held (0 | 1), the balance or nil}`.
 */
export const RELEASE = `${FREE}return {held, redis.call('HGET', KEYS[1], 'b:' .. L)}`;

/**
 * Makes the unexpired hold ARGV[2] count until at least ARGV[3] ms from now (never shorter); an
 * expired or missing hold is left as it is.
 * KEYS: account, holds. ARGV[1] the ledger `L`, ARGV[2] the hold's id, ARGV[3] the ttl in ms,
 * ARGV[4] how long the keys live at least, in ms.
 * Answers 1 when extended, 0 when the hold was not there unexpired.
 */
export const EXTEND = `${NOW}${KEEP}${PARSE}local v = redis.call('HGET', KEYS[2], ARGV[2])
if not v then return 0 end
local _, x = parse(ARGV[2], v)
if x <= now then return 0 end
local expiresAt = math.max(x, now + tonumber(ARGV[3]))
redis.call('HSET', KEYS[2], ARGV[2], string.match(v, '^(%d+):') .. ':' .. string.format('%.0f', expiresAt))
keep(KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[3]))
keep(KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[3]))
return 1`;

/**
 * Moves the account to a new epoch: every balance of it is stale, whichever ledgers it has.
 * KEYS: account. ARGV[1] how long the key lives at least, in ms. Answers the new epoch.
 */
export const INVALIDATE = `${KEEP}local e = redis.call('HINCRBY', KEYS[1], 'e', 1)
keep(KEYS[1], tonumber(ARGV[1]))
return e`;
