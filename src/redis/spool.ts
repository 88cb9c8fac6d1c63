import { InvalidRequestError, SpoolError } from '../core/errors.js';
import { check, checkOptionsObject, integer, redisClient, required, text } from '../internal/checks.js';
import type { Spool, SpoolEntry, SpooledEvent } from '../tracker/spool.js';
import { evalScript, px, type RedisLike } from './client.js';

/** Options of {@link redisSpool}. */
export interface RedisSpoolOptions {
  /** The stream's key, shared by every instance that sends the same events. Default `'billing-sdk:usage'`. */
  stream?: string | undefined;
  /** The consumer group of those instances (one per stream in practice). Default `'billing-sdk'`. */
  group?: string | undefined;
  /**
   * This instance's consumer name in the group. Default: a random id per spool, so each instance
   * (and each restart) is a consumer of its own, and entries a dead instance held are taken over by
   * the others once idle for `claimIdleMs`. A stable name per instance (a pod or host name that
   * survives a restart, never shared by two instances running at once) lets the restarted instance
   * take back its own entries at once on `open()`, without waiting for the claim time.
   */
  consumer?: string | undefined;
  /**
   * How long an entry handed to an instance may go without a sign of life from it before another
   * instance claims it and sends it (with its original key), in ms. A live instance renews its
   * entries every third of this time, so only a dead or frozen one loses them. Default 30 000.
   */
  claimIdleMs?: number | undefined;
  /** How long to wait for Redis before a step fails with {@link SpoolError}, in ms. Default 2 000. */
  timeoutMs?: number | undefined;
}

/** The stream entry's one field: the event as JSON, with its `event_key`. */
const FIELD = 'event';

// Appends and replacements carry a deadline in Redis's clock (ARGV[1], 0 = none): a command that
// Redis runs after it (queued by the client while it reconnected, or stuck behind a frozen server)
// writes nothing, so a step that failed on its timeout cannot land later. Each answers Redis's time.
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = tonumber(ARGV[1])
if deadline > 0 and now > deadline then return {'late', now} end
`;

// KEYS[1] the stream; ARGV[2..] the events.
const APPEND = `${NOW}local ids = {}
for i = 2, #ARGV do ids[i - 1] = redis.call('XADD', KEYS[1], '*', '${FIELD}', ARGV[i]) end
return {'ok', now, ids}`;

// ARGV[2] group, ARGV[3] consumer, ARGV[4] the aggregate, ARGV[5..] the members. A member already
// acknowledged, or claimed by another consumer, may be sent (or be sent already) by someone else:
// replacing it would count it twice, so nothing is written.
const REPLACE = `${NOW}for i = 5, #ARGV do
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

// Creates the group (from the stream's start: entries appended before it are not skipped) and drops
// consumers of the group that hold no entry and were idle longer than the claim time: dead
// instances' names, which would otherwise pile up with every restart. Dropping one loses nothing
// (it holds no entry), and a live consumer dropped so is recreated by its next read.
// ARGV: group, consumer, claim time. Answers Redis's time.
const OPEN = `local made = redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
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

// One step for a take: this consumer's own pending entries first while ARGV[4] (the cursor in
// them) is not '', then entries other consumers left idle longer than ARGV[5] ms (XAUTOCLAIM from
// the cursor ARGV[6]), then new entries (non-blocking: the client's connection is the app's).
// An entry deleted meanwhile, or not written by a spool, is acknowledged and dropped.
// ARGV[1] group, ARGV[2] consumer, ARGV[3] max. Answers {own cursor, claim cursor, id, json, ...}.
const TAKE = `local s, g, c = KEYS[1], ARGV[1], ARGV[2]
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
if room() > 0 then
  local r = redis.call('XREADGROUP', 'GROUP', g, c, 'COUNT', room(), 'STREAMS', s, '>')
  if type(r) == 'table' and r[1] then collect(r[1][2]) end
end
return out`;

// Acknowledges and deletes: the stream holds only entries not acknowledged yet. ARGV[1] group.
const ACK = `local n = 0
for i = 2, #ARGV do
  n = n + redis.call('XACK', KEYS[1], ARGV[1], ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
return n`;

// Since acknowledged entries are deleted, an id is unacknowledged exactly while its entry exists.
const PENDING = `local out = {}
for i = 1, #ARGV do
  if #redis.call('XRANGE', KEYS[1], ARGV[i], ARGV[i]) > 0 then out[#out + 1] = ARGV[i] end
end
return out`;

// The heartbeat: resets the idle time of entries this consumer still holds (XCLAIM to itself,
// JUSTID: no delivery counted), so no other instance claims them while it works on them; an entry
// another consumer claimed meanwhile is left to it. ARGV[1] group, ARGV[2] consumer.
const RENEW = `for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
  if #p > 0 then redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID') end
end
return 0`;

// On close: a consumer that holds nothing leaves the group. ARGV[1] group, ARGV[2] consumer.
const LEAVE = `if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) == 0 then
  redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
end
return 0`;

/** Ids per script for acks, pending checks and renewals: bounds how long one script holds Redis. */
const CHUNK = 1_000;
/** The longest `setTimeout` accepts (about 24.8 days). */
const MAX_TIMER = 2_147_483_647;
const STREAM_ID = /^\d+-\d+$/;

const rules = {
  stream: [text],
  group: [text],
  consumer: [text],
  claimIdleMs: [integer(1, MAX_TIMER)],
  timeoutMs: [integer(1, MAX_TIMER)],
};

/**
 * A durable {@link Spool} in a Redis stream, shared by several instances of a service through a
 * consumer group: pass it as the `spool` option of `createUsageTracker`. `track` resolves once
 * Redis stored the event (XADD): as durable as Redis is (its AOF `appendfsync` setting, its
 * replicas). Every instance sends new events from the shared stream; an instance that dies leaves
 * its unacknowledged entries pending, and another claims them after `claimIdleMs` and sends them
 * with their original keys, which the service answers `idempotent: true` if they had gone through.
 *
 * Each step is one Lua script (one round trip, atomic), with a timeout: when Redis is down or
 * slower than `timeoutMs`, the step rejects with {@link SpoolError} instead of hanging (node-redis
 * queues commands while it reconnects, and a stalled server runs what it received once it resumes).
 * An append or replace that failed on its timeout does not land later: its script carries a deadline
 * in Redis's clock (`timeoutMs` less up to 500 ms for the answer's way back) and writes nothing past
 * it. Reads never block (the client's connection is shared with the application): the tracker polls.
 *
 * The stream holds only what is not acknowledged: `ack` acknowledges and deletes (XACK + XDEL), so
 * it stays as long as the backlog, with no trimming that could cut entries not sent yet. Consumers
 * that left nothing pending are removed from the group (on `close`, and on `open` for dead ones).
 * Needs Redis 6.2 or later (XAUTOCLAIM). Every key is the stream's, so it runs on Redis Cluster.
 *
 * @param client - A connected node-redis client (`createClient()` from `redis`), or any
 * {@link RedisLike}. It is not closed here: the application owns it.
 * @throws {@link billing-sdk!InvalidRequestError} when an option is invalid, naming it (`options`
 * when they are not a plain object), or when `client` has no `sendCommand`.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { BillingClient, createUsageTracker } from 'billing-sdk';
 * import { redisSpool } from 'billing-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const tracker = createUsageTracker(new BillingClient(), {
 *   spool: redisSpool(redis, { consumer: process.env.HOSTNAME }),
 * });
 * await tracker.track({ account_ref_id: 'acct_1', product_code: 'api', meter_code: 'calls', quantity: 1 });
 * ```
 */
export function redisSpool(client: RedisLike, options: RedisSpoolOptions = {}): Spool {
  check('redisSpool', { client }, { client: [required, redisClient] });
  // Field names stay unprefixed (`claimIdleMs`), as before; the options as a whole are `options`.
  checkOptionsObject('redisSpool', options);
  check('redisSpool', options, rules);
  const stream = options.stream ?? 'billing-sdk:usage';
  const group = options.group ?? 'billing-sdk';
  const consumer = options.consumer ?? randomName();
  const claimIdleMs = px(options.claimIdleMs ?? 30_000);
  const timeoutMs = options.timeoutMs ?? 2_000;
  /** How long before its timeout an append must have run in Redis: time for the answer to come back. */
  const margin = Math.min(timeoutMs / 2, 500);

  /** Entries handed out by `take` and not acknowledged since: never handed out twice, renewed while held. */
  const held = new Set<string>();
  /** Cursor in this consumer's own pending entries, `''` once they were all handed out. */
  let ownCursor = '0';
  let claimCursor = '0-0';
  let state: 'new' | 'open' | 'closed' = 'new';
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let renewing = false;
  /** `take`s run one at a time: two at once would read the same own pending entries. */
  let takes: Promise<unknown> = Promise.resolve();

  // Redis's clock minus performance.now(), from the answer that came back fastest lately: the
  // deadline of an append is set in Redis's clock, which may differ from this host's.
  let offset: number | undefined;
  let bestRtt = Number.POSITIVE_INFINITY;
  let sampledAt = Number.NEGATIVE_INFINITY;
  const sample = (sent: number, redisNow: unknown, force = false): void => {
    const received = performance.now();
    const rtt = received - sent;
    if (typeof redisNow !== 'number' || !Number.isFinite(redisNow)) return;
    if (force || rtt <= bestRtt || received - sampledAt > 10_000) {
      offset = redisNow - (sent + received) / 2;
      bestRtt = rtt;
      sampledAt = received;
    }
  };
  const deadline = (sent: number): number =>
    offset === undefined ? 0 : Math.floor(sent + offset + timeoutMs - margin);

  const failure = (operation: string, error: unknown): SpoolError => {
    if (error instanceof SpoolError) return error;
    let message = error instanceof Error ? error.message : String(error);
    // Redis before 6.2 has no XAUTOCLAIM (nor XPENDING's IDLE): a script calling it fails so.
    if (/unknown.*command|syntax error/i.test(message)) message += ' (redisSpool needs Redis 6.2 or later)';
    return new SpoolError('unavailable', `redisSpool ${operation} on stream ${stream}: ${message}`, {
      cause: error,
    });
  };
  const run = (script: string, args: (string | number)[]) =>
    evalScript(client, script, [stream], args, timeoutMs);
  const usable = (operation: string): void => {
    if (state !== 'open')
      throw new SpoolError(
        'closed',
        `redisSpool ${operation}: the spool is ${state === 'new' ? 'not open' : 'closed'}`,
      );
  };

  /**
   * Runs a deadline-carrying script (append, replace). A `late` answer that came back in good
   * time proves the clock estimate wrong, not Redis slow: resample and try once more.
   */
  const write = async (operation: string, args: string[]): Promise<unknown[]> => {
    for (let attempt = 0; ; attempt++) {
      const sent = performance.now();
      const reply = await run(operation === 'append' ? APPEND : REPLACE, [deadline(sent), ...args]);
      if (!Array.isArray(reply)) throw new TypeError(`unexpected Redis reply: ${JSON.stringify(reply)}`);
      const quick = performance.now() - sent < timeoutMs - margin;
      sample(sent, reply[1], reply[0] === 'late' && quick);
      if (reply[0] !== 'late') return reply;
      if (!quick || attempt > 0)
        throw new Error(
          `Redis ran the ${operation} after its deadline (${timeoutMs} ms): nothing was written`,
        );
    }
  };

  const renew = async (): Promise<void> => {
    if (renewing || held.size === 0) return;
    renewing = true;
    try {
      const ids = [...held];
      for (let i = 0; i < ids.length; i += CHUNK)
        await run(RENEW, [group, consumer, ...ids.slice(i, i + CHUNK)]);
    } catch {
      // Renewal is best effort: if Redis is unreachable, no other instance can claim either; if
      // entries are claimed anyway, their keys keep the second send from counting twice.
    } finally {
      renewing = false;
    }
  };

  const takeNow = async (max: number): Promise<SpoolEntry[]> => {
    const args = [group, consumer, max, ownCursor, claimIdleMs, claimCursor];
    let reply: unknown;
    try {
      reply = await run(TAKE, args);
    } catch (error) {
      // The stream was deleted (FLUSHALL, a Redis without persistence restarted): make the group again.
      if (!/NOGROUP/.test(String((error as Error)?.message))) throw error;
      await openGroup();
      reply = await run(TAKE, args);
    }
    if (!Array.isArray(reply) || reply.length % 2 !== 0)
      throw new TypeError(`unexpected Redis reply to a take: ${JSON.stringify(reply)}`);
    ownCursor = String(reply[0]);
    claimCursor = String(reply[1]);
    const entries: SpoolEntry[] = [];
    const unreadable: string[] = [];
    for (let i = 2; i < reply.length; i += 2) {
      const id = String(reply[i]);
      // Already handed out (XAUTOCLAIM took back an entry of ours whose renewal came late).
      if (held.has(id)) continue;
      const event = parse(reply[i + 1]);
      if (!event) unreadable.push(id);
      else {
        held.add(id);
        entries.push({ id, event });
      }
    }
    // Not an event a spool wrote: left pending, it would be claimed and fail again for ever.
    if (unreadable.length) await run(ACK, [group, ...unreadable]).catch(() => {});
    return entries;
  };

  const openGroup = async (): Promise<void> => {
    const sent = performance.now();
    sample(sent, await run(OPEN, [group, consumer, claimIdleMs]));
  };

  /** Runs `ids` through `script` in chunks; answers the chunks' replies, flattened. */
  const chunked = async (script: string, head: string[], ids: readonly string[]): Promise<unknown[]> => {
    const replies: unknown[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const reply = await run(script, [...head, ...ids.slice(i, i + CHUNK)]);
      if (Array.isArray(reply)) replies.push(...reply);
    }
    return replies;
  };

  return {
    durable: true,

    async open() {
      if (state !== 'new') {
        throw new SpoolError(
          'closed',
          `redisSpool open: the spool is ${state === 'open' ? 'already open' : 'closed'}`,
        );
      }
      try {
        await openGroup();
      } catch (error) {
        throw failure('open', error);
      }
      state = 'open';
      const every = Math.max(10, Math.floor(claimIdleMs / 3));
      heartbeat = setInterval(() => void renew(), every);
      // The heartbeat must not keep the process alive: the tracker's close ends the work.
      (heartbeat as { unref?: () => void }).unref?.();
    },

    async append(events) {
      usable('append');
      if (events.length === 0) return [];
      const json = events.map((event) => JSON.stringify(event));
      try {
        const reply = await write('append', json);
        const ids = reply[2];
        if (!Array.isArray(ids) || ids.length !== events.length)
          throw new TypeError(`unexpected Redis reply to an append: ${JSON.stringify(reply)}`);
        return ids.map(String);
      } catch (error) {
        throw failure('append', error);
      }
    },

    take(max) {
      const result = takes.then(async () => {
        usable('take');
        if (!(max >= 1)) return [];
        try {
          return await takeNow(Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER)));
        } catch (error) {
          throw failure('take', error);
        }
      });
      takes = result.catch(() => {});
      return result;
    },

    async ack(ids) {
      usable('ack');
      const valid = ids.filter((id) => STREAM_ID.test(id));
      try {
        await chunked(ACK, [group], valid);
      } catch (error) {
        throw failure('ack', error);
      }
      for (const id of ids) held.delete(id);
    },

    async replace(members, aggregate) {
      usable('replace');
      const bad = members.find((id) => !STREAM_ID.test(id));
      if (bad !== undefined)
        throw new InvalidRequestError('redisSpool.replace', [
          { field: 'members', message: `holds ${JSON.stringify(bad)}, not an id of this spool` },
        ]);
      let reply: unknown[];
      try {
        reply = await write('replace', [group, consumer, JSON.stringify(aggregate), ...members]);
      } catch (error) {
        throw failure('replace', error);
      }
      if (reply[0] !== 'ok') {
        const why = reply[0] === 'gone' ? 'was acknowledged already' : 'was claimed by another instance';
        throw new SpoolError(
          'conflict',
          `redisSpool replace on stream ${stream}: member ${String(reply[2])} ${why}; nothing was written`,
        );
      }
      for (const id of members) held.delete(id);
      return String(reply[2]);
    },

    async pending(ids) {
      usable('pending');
      const valid = ids.filter((id) => STREAM_ID.test(id));
      try {
        const found = new Set((await chunked(PENDING, [], valid)).map(String));
        return ids.filter((id) => found.has(id));
      } catch (error) {
        throw failure('pending', error);
      }
    },

    async close() {
      if (state === 'closed') return;
      state = 'closed';
      clearInterval(heartbeat);
      await takes;
      try {
        await run(LEAVE, [group, consumer]);
      } catch {
        // Best effort: a consumer left in the group holds nothing and is removed by a later open.
      }
    },
  };
}

/** The event of an entry's JSON, or `undefined` when it is not one (written by another program). */
function parse(json: unknown): SpooledEvent | undefined {
  try {
    const event = JSON.parse(String(json)) as Partial<SpooledEvent> | null;
    return typeof event?.event_key === 'string' ? (event as SpooledEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** A consumer name no other instance picks: host-independent, random. */
function randomName(): string {
  return `spool-${crypto.randomUUID()}`;
}
