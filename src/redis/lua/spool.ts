/**
 * The Lua scripts of `redisSpool`, one atomic step each. Every script's first key, KEYS[1], is the
 * stream; each entry holds one field, {@link FIELD}, the event as JSON with its `event_key`. The
 * stream holds only entries not acknowledged yet: acknowledging an entry deletes it. The
 * dead-letter scripts' second key, KEYS[2], is the dead-letter stream, in the stream's slot.
 *
 * @module
 */

/** The stream entry's one field: the event as JSON, with its `event_key`. */
export const FIELD = 'event';

/**
 * The head of the scripts that carry a deadline in Redis's clock (ARGV[1], 0 = none): a command
 * that Redis runs after it (queued by the client while it reconnected, or stuck behind a frozen
 * server) writes nothing, so a step that failed on its timeout cannot land later. Answers
 * `{'late', now}` past the deadline; otherwise leaves Redis's time in `now` for the rest.
 */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = tonumber(ARGV[1])
if deadline > 0 and now > deadline then return {'late', now} end
`;

/**
 * Appends events. ARGV[1] the deadline, ARGV[2..] the events' JSON.
 * Answers `{'ok', now, {id, ...}}` or `{'late', now}`.
 */
export const APPEND = `${NOW}local ids = {}
for i = 2, #ARGV do ids[i - 1] = redis.call('XADD', KEYS[1], '*', '${FIELD}', ARGV[i]) end
return {'ok', now, ids}`;

/**
 * Replaces entries this consumer holds by one aggregate. A member already acknowledged, or claimed
 * by another consumer, may be sent (or be sent already) by someone else: replacing it would count
 * it twice, so nothing is written.
 * ARGV[1] the deadline, ARGV[2] the group, ARGV[3] the consumer, ARGV[4] the aggregate's JSON,
 * ARGV[5..] the members' ids.
 * Answers `{'ok', now, new id}`, `{'gone', now, member}`, `{'taken', now, member}` or `{'late', now}`.
 */
export const REPLACE = `${NOW}for i = 5, #ARGV do
  local id = ARGV[i]
  if #redis.call('XRANGE', KEYS[1], id, id) == 0 then return {'gone', now, id} end
  local p = redis.call('XPENDING', KEYS[1], ARGV[2], id, id, 1)
  if #p > 0 and p[1][2] ~= ARGV[3] then return {'taken', now, id} end
end
local id = redis.call('XADD', KEYS[1], '*', '${FIELD}', ARGV[4])
for i = 5, #ARGV do
  redis.call('XACK', KEYS[1], ARGV[2], ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
return {'ok', now, id}`;

/**
 * Creates the group (from the stream's start: entries appended before it are not skipped) and
 * drops consumers of the group that hold no entry and were idle longer than the claim time: dead
 * instances' names, which would otherwise pile up with every restart. Dropping one loses nothing
 * (it holds no entry), and a live consumer dropped so is recreated by its next read.
 * ARGV[1] the group, ARGV[2] this consumer, ARGV[3] the claim time in ms. Answers Redis's time in ms.
 */
export const OPEN = `local made = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
if type(made) == 'table' and made.err and not string.find(made.err, 'BUSYGROUP') then
  return redis.error_reply(made.err)
end
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f.name ~= ARGV[2] and tonumber(f.pending) == 0 and tonumber(f.idle) > tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f.name)
  end
end
local t = redis.call('TIME')
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * One step of a take: this consumer's own pending entries first while ARGV[4] (the cursor in them)
 * is not `''`, then entries other consumers left idle longer than ARGV[5] ms (XAUTOCLAIM from the
 * cursor ARGV[6]), then new entries (non-blocking: the client's connection is the app's). An entry
 * deleted meanwhile, or not written by a spool, is acknowledged and dropped. With ARGV[7] > 0 (ms),
 * only new entries appended at least that long ago are read (entry ids are Redis's time of the
 * XADD): an append waiting for its replicas may still withdraw its entries meanwhile.
 * ARGV[1] the group, ARGV[2] the consumer, ARGV[3] how many entries at most.
 * Answers `{own cursor, claim cursor, id, json, id, json, ...}`.
 */
export const TAKE = `local s, g, c = KEYS[1], ARGV[1], ARGV[2]
local max = tonumber(ARGV[3])
local out = {ARGV[4], ARGV[6]}
local function collect(entries)
  if type(entries) ~= 'table' then return end
  for _, e in ipairs(entries) do
    if type(e) == 'table' then
      local json
      if type(e[2]) == 'table' then
        for i = 1, #e[2], 2 do if e[2][i] == '${FIELD}' then json = e[2][i + 1] end end
      end
      if json then
        out[#out + 1] = e[1]
        out[#out + 1] = json
      else
        redis.call('XACK', s, g, e[1])
        redis.call('XDEL', s, e[1])
      end
    end
  end
end
local function room() return max - (#out - 2) / 2 end
if ARGV[4] ~= '' then
  local r = redis.call('XREADGROUP', 'GROUP', g, c, 'COUNT', max, 'STREAMS', s, ARGV[4])
  local entries = type(r) == 'table' and r[1] and r[1][2] or {}
  if #entries < max then out[1] = '' else out[1] = entries[#entries][1] end
  collect(entries)
end
if room() > 0 then
  local r = redis.call('XAUTOCLAIM', s, g, c, ARGV[5], ARGV[6], 'COUNT', room())
  out[2] = r[1]
  collect(r[2])
end
local fresh = room()
local delay = tonumber(ARGV[7]) or 0
if fresh > 0 and delay > 0 then
  local last = '0-0'
  for _, info in ipairs(redis.call('XINFO', 'GROUPS', s)) do
    local f = {}
    for i = 1, #info, 2 do f[info[i]] = info[i + 1] end
    if f.name == g then last = f['last-delivered-id'] end
  end
  local t = redis.call('TIME')
  local cutoff = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - delay
  fresh = cutoff > 0 and #redis.call('XRANGE', s, '(' .. last, tostring(cutoff), 'COUNT', fresh) or 0
end
if fresh > 0 then
  local r = redis.call('XREADGROUP', 'GROUP', g, c, 'COUNT', fresh, 'STREAMS', s, '>')
  if type(r) == 'table' and r[1] then collect(r[1][2]) end
end
return out`;

/**
 * Acknowledges and deletes entries. ARGV[1] the group, ARGV[2..] the ids.
 * Answers how many were acknowledged.
 */
export const ACK = `local n = 0
for i = 2, #ARGV do
  n = n + redis.call('XACK', KEYS[1], ARGV[1], ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
return n`;

/**
 * Which ids are not acknowledged yet: since acknowledged entries are deleted, an id is
 * unacknowledged exactly while its entry exists, in the stream and group it was appended to. A
 * stream or group gone is an error (`NOGROUP`), never "all acknowledged". An id older than
 * ARGV[2] (ms; the moment this spool saw the stream lost, `0` for never) may have been lost with it,
 * not acknowledged: answered as still there, so it is never taken as sent elsewhere.
 * ARGV[1] the group, ARGV[2] the loss boundary, ARGV[3..] the ids. Answers those still there.
 */
export const PENDING = `if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('NOGROUP the stream is gone') end
local found = false
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  for i = 1, #g, 2 do if g[i] == 'name' and g[i + 1] == ARGV[1] then found = true end end
end
if not found then return redis.error_reply('NOGROUP the consumer group is gone') end
local before = tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV do
  if #redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i]) > 0 or tonumber(string.match(ARGV[i], '^%d+')) < before then
    out[#out + 1] = ARGV[i]
  end
end
return out`;

/**
 * The heartbeat: resets the idle time of entries this consumer still holds (XCLAIM to itself,
 * JUSTID: no delivery counted), so no other instance claims them while it works on them; an entry
 * another consumer claimed meanwhile is left to it.
 * ARGV[1] the group, ARGV[2] the consumer, ARGV[3..] the ids. Answers 0.
 */
export const RENEW = `for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
  if #p > 0 then redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID') end
end
return 0`;

/**
 * On close: a consumer that holds nothing leaves the group.
 * ARGV[1] the group, ARGV[2] the consumer. Answers 0.
 */
export const LEAVE = `if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) == 0 then
  redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
end
return 0`;

/**
 * How many entries the stream holds for this consumer: every entry not acknowledged yet
 * (acknowledging deletes) less those other consumers of the group hold, i.e. this consumer's own
 * pending entries plus those not handed to anyone. ARGV[1] the group, ARGV[2] the consumer.
 * Answers the count.
 */
export const SIZE = `local len = redis.call('XLEN', KEYS[1])
local summary = redis.pcall('XPENDING', KEYS[1], ARGV[1])
if type(summary) ~= 'table' or summary.err or type(summary[4]) ~= 'table' then return len end
local others = 0
for _, held in ipairs(summary[4]) do
  if held[1] ~= ARGV[2] then others = others + tonumber(held[2]) end
end
return len - others`;

/**
 * Withdraws appended entries that no consumer was handed yet (after too few replicas confirmed
 * them): an entry still in the stream and pending under no consumer was never read, so deleting it
 * means it is never sent. One handed out already is left to its holder.
 * ARGV[1] the group, ARGV[2..] the ids. Answers how many were handed out already (and left).
 */
export const WITHDRAW = `local handed = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if #redis.call('XRANGE', KEYS[1], id, id) > 0 then
    if #redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1) == 0 then
      redis.call('XDEL', KEYS[1], id)
    else
      handed = handed + 1
    end
  end
end
return handed`;

/** The dead-letter stream's second field: the letter's reason, attempts and times (JSON). */
export const LETTER = 'letter';

/**
 * Moves entries into the dead-letter stream KEYS[2] (in the stream's slot): each entry still in the
 * stream is added there (its event as stored, and {@link LETTER} its reason, attempts and times),
 * then acknowledged and deleted. ARGV[1] the group, then pairs: an entry's id, its letter's JSON.
 * Answers how many were moved.
 */
export const DEAD_LETTER = `local n = 0
for i = 2, #ARGV, 2 do
  local e = redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i])
  if #e > 0 then
    local json
    for j = 1, #e[1][2], 2 do if e[1][2][j] == '${FIELD}' then json = e[1][2][j + 1] end end
    if json then redis.call('XADD', KEYS[2], '*', '${FIELD}', json, '${LETTER}', ARGV[i + 1]) end
    redis.call('XACK', KEYS[1], ARGV[1], ARGV[i])
    redis.call('XDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n`;

/**
 * The letters of the dead-letter stream KEYS[2] chosen by ARGV[2..] (ids; none with ARGV[1] =
 * 'all': every one), as `{id, event, letter, ...}`, oldest first. The head of replay and drop.
 */
const CHOSEN = `local chosen = {}
if ARGV[1] == 'all' then
  chosen = redis.call('XRANGE', KEYS[2], '-', '+')
else
  for i = 2, #ARGV do
    local e = redis.call('XRANGE', KEYS[2], ARGV[i], ARGV[i])
    if #e > 0 then chosen[#chosen + 1] = e[1] end
  end
end
local out = {}
`;

/**
 * Moves letters back into the stream KEYS[1], their events as stored (original `event_key`s),
 * and deletes them from the dead-letter stream KEYS[2]. ARGV as {@link CHOSEN}. Answers the
 * letters' ids moved.
 */
export const REPLAY_LETTERS = `${CHOSEN}for _, e in ipairs(chosen) do
  local json
  for j = 1, #e[2], 2 do if e[2][j] == '${FIELD}' then json = e[2][j + 1] end end
  if json then
    redis.call('XADD', KEYS[1], '*', '${FIELD}', json)
    redis.call('XDEL', KEYS[2], e[1])
    out[#out + 1] = e[1]
  end
end
return out`;

/** Deletes letters of the dead-letter stream KEYS[2]. ARGV as {@link CHOSEN}. Answers their ids. */
export const DROP_LETTERS = `${CHOSEN}for _, e in ipairs(chosen) do
  redis.call('XDEL', KEYS[2], e[1])
  out[#out + 1] = e[1]
end
return out`;

/** The letters of the dead-letter stream KEYS[2], oldest first: at most ARGV[1] (0: all). Answers XRANGE's reply. */
export const LIST_LETTERS = `if tonumber(ARGV[1]) > 0 then return redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', ARGV[1]) end
return redis.call('XRANGE', KEYS[2], '-', '+')`;
