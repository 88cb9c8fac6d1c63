import { SpoolError } from '../core/errors/index.js';
import { checkOptions, integer, text } from '../internal/checks.js';
import type { Spool } from '../tracker/spool.js';
import { deadLetterSteps, Handout, SpoolCore } from '../tracker/spool-core.js';
import { checkStorable } from '../tracker/storable-event.js';
import type { ServiceScoped } from '../util/service-namespace.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { adaptClient, type RedisClient } from './adapt.js';
import { evalScript, px } from './client.js';
import { isTransient } from './failure.js';
import { ACK, PENDING, SIZE } from './lua/spool.js';
import { confirmedReplicas, replicaRules, replicaWait } from './replica-wait.js';
import { RedisClock, writeBeforeDeadline } from './spool-clock.js';
import { deadLetterKey, deadLetterStorage, isStreamId } from './spool-dead-letters.js';
import { leaveGroup, openGroup, renew } from './spool-group.js';
import { isGone, type StreamLoss, streamLost } from './spool-loss.js';
import { chunked, DEFAULT_STREAM, oddReply, type SpoolStream, serviceStream } from './spool-stream.js';
import { taker } from './spool-take.js';
import { replicated } from './spool-withdraw.js';

/** Options of {@link redisSpool}. */
export interface RedisSpoolOptions {
  /**
   * The stream's key, shared by every instance that sends the same events. Default: one per
   * service, `'billing-sdk:usage:<namespace>'`, where the tracker (or `billing-sdk relay`) puts the
   * namespace of its client (32 hex characters of a digest of its API key and base URL): two
   * services (a live and a sandbox gateway) on one Redis never send each other's events. A spool
   * used on its own, outside a tracker, uses `'billing-sdk:usage'`. A key rotation changes the
   * namespace: `billing-sdk doctor` names the old stream while it holds events, and `billing-sdk
   * relay --stream <it> --once` sends them with the new key. A name given here is used as it is.
   */
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
  /**
   * How many replicas must hold an appended event before `append` (and so `track`) resolves: after
   * the write, the spool sends `WAIT waitReplicas waitTimeoutMs` on the same connection, and when
   * fewer replicas confirmed it in time, `append` rejects with {@link SpoolError} `'not_replicated'`
   * (and withdraws the entries no instance was handed yet), so no `track` resolves for an event a
   * failover could lose. A `replace` (the aggregate of an `aggregate` window) waits the same way.
   * So that a withdrawn entry is never sent, an instance takes a new entry only once it is
   * `waitTimeoutMs` + 500 ms old: give every instance sharing a stream the same `waitReplicas`.
   * Default 0: resolve once the master stored it, as Redis acknowledges any write.
   *
   * The cost: every append waits for the replication round trip (well under a millisecond on a
   * LAN, more across zones), WAIT holds the client's connection meanwhile (other commands sent on
   * it queue behind: a dedicated client for the spool avoids that), events reach the service
   * `waitTimeoutMs` + 500 ms later, and while fewer replicas than this are reachable (a promoted
   * replica has none until its old master rejoins), every `track` fails after `waitTimeoutMs`.
   * A rejected `track` may still be recorded (an entry an instance took meanwhile, a master that
   * died before it could withdraw it): retried with the same `event_key`, it counts once.
   *
   * WAIT is not strong consistency: a confirmed entry is lost all the same when the master and
   * every replica that had it are lost, or when a replica that had not got it is promoted (with
   * several replicas, another than the one that confirmed; a manual `FAILOVER FORCE`/`TAKEOVER`;
   * `cluster-replica-validity-factor 0`). It narrows the window; it does not close every one.
   */
  waitReplicas?: number | undefined;
  /** How long WAIT waits for `waitReplicas` replicas before the append fails, in ms. Default 1 000. */
  waitTimeoutMs?: number | undefined;
}

/** The ids that can be entries of a stream: others are never sent to Redis (a script would fail on them). */
const streamIds = (ids: readonly string[]): string[] => ids.filter(isStreamId);

const rules = {
  stream: [text],
  group: [text],
  consumer: [text],
  claimIdleMs: [integer(1, MAX_TIMER_MS)],
  timeoutMs: [integer(1, MAX_TIMER_MS)],
  ...replicaRules,
};

/**
 * A durable {@link Spool} in a Redis stream, shared by several instances of a service through a
 * consumer group: pass it as the `spool` option of `createUsageTracker`. `track` resolves once
 * Redis stored the event (XADD): as durable as Redis is (its AOF `appendfsync` setting, its
 * replicas); with `waitReplicas`, once that many replicas hold it too, so a master failing over
 * loses no event whose `track` resolved. Every instance sends new events from the shared stream; an instance that dies leaves
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
 * An event the service refuses for good is moved, in one script, into the dead-letter stream
 * beside (`<stream>:dead-letters`, or `{<stream>}:dead-letters` so that it shares the stream's
 * slot: the event as stored, the service's answer or error, attempts and times), where
 * `deadLetters(spool)` lists, replays or drops it. Needs Redis 6.2 or later (XAUTOCLAIM).
 *
 * Redis Cluster works as is: every script's one key is the stream (the dead-letter steps': the
 * stream and its dead-letter stream, in one slot), so no step can be `CROSSSLOT`,
 * and the stream needs no hash tag. One stream is one key, so one master serves every append and
 * take of it (and one replica copies them): past what one master takes, spread the events over
 * several spools with their own `stream` names (say per service or per shard of your accounts),
 * which hash to different slots. A re-run after an unknown outcome (ioredis resends a command
 * whose connection dropped; a caller retries a `track` that failed): an append carries a deadline
 * (a late run writes nothing), and one that ran twice leaves two entries with one `event_key`,
 * which the service records once; a replace run twice finds its members gone and writes nothing
 * (`'conflict'`); take, ack, pending, size, open and close change nothing the second time (a
 * take's entries, handed out twice, are one consumer's pending entries, sent once).
 *
 * Without a `stream` option the spool is {@link ServiceScoped}: the tracker it is given to (and
 * `billing-sdk relay`) uses the stream of its client's service, `billing-sdk:usage:<namespace>`,
 * with that stream's own dead letters, so two services on one Redis never share one by default.
 *
 * @param client - A connected client: node-redis (`createClient()` or `createCluster()` from
 * `redis`), ioredis (`new Redis()` or `new Cluster()`), or any {@link RedisLike}; see
 * {@link RedisClient}. It is not closed here: the application owns it.
 * @throws {@link billing-sdk!InvalidRequestError} when an option is invalid, naming it (`options`
 * when they are not a plain object), or when `client` is none of these.
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
export function redisSpool(client: RedisClient, options: RedisSpoolOptions = {}): Spool {
  const runner = adaptClient('redisSpool', client);
  // A bad field is named as given (`claimIdleMs`); options that are no object are named `options`.
  checkOptions('redisSpool', options, rules);
  const stream = options.stream ?? DEFAULT_STREAM;
  const timeoutMs = options.timeoutMs ?? 2_000;
  const replicas = replicaWait(options);
  const spool: SpoolStream = {
    stream,
    group: options.group ?? 'billing-sdk',
    consumer: options.consumer ?? `spool-${crypto.randomUUID()}`,
    claimIdleMs: px(options.claimIdleMs ?? 30_000),
    timeoutMs,
    run: (script, args) => evalScript(runner, script, [stream], args, timeoutMs),
    replicas,
    confirm: () => confirmedReplicas(runner, stream, replicas, timeoutMs),
  };
  const clock = new RedisClock(timeoutMs);
  const core = new SpoolCore({ name: 'redisSpool', place: `on stream ${stream}`, transient: isTransient });
  const open = () => openGroup(spool, clock);
  let handout = new Handout();
  const loss: StreamLoss = { before: 0 };
  let takeNow = taker(spool, open, loss);
  const letters = deadLetterKey(stream);
  const deadLetters = deadLetterSteps(
    core,
    deadLetterStorage(spool.group, (script, args) =>
      evalScript(runner, script, [stream, letters], args, timeoutMs),
    ),
    () => handout,
  );

  // Only default names are the service's to choose: a stream the user named is where they said.
  const scoped: Partial<ServiceScoped<Spool>> =
    options.stream === undefined
      ? { forService: (service) => redisSpool(client, { ...options, stream: serviceStream(service) }) }
      : {};

  return {
    durable: true,
    ...scoped,

    open: () =>
      core.open(async () => {
        try {
          await open();
        } catch (error) {
          // Redis before 6.2 has no XAUTOCLAIM (nor XPENDING's IDLE): a script calling it fails so.
          if (/unknown.*command|syntax error/i.test(String((error as Error)?.message))) {
            throw new SpoolError('io', `redisSpool.open on stream ${stream}: needs Redis 6.2 or later`, {
              cause: error,
            });
          }
          throw error;
        }
        // A new session: this consumer's own pending entries are handed first again.
        handout = new Handout();
        takeNow = taker(spool, open, loss);
        handout.startRenewal(spool.claimIdleMs, (held) => renew(spool, held));
      }),

    append: (events) =>
      core.run('append', async () => {
        if (events.length === 0) return [];
        checkStorable('redisSpool.append', events);
        const json = events.map((event) => JSON.stringify(event));
        const reply = await writeBeforeDeadline(spool, clock, 'append', json);
        const ids = reply[2];
        if (!Array.isArray(ids) || ids.length !== events.length) throw oddReply('append', reply);
        await replicated(spool, 'append', ids.map(String));
        return ids.map(String);
      }),

    take: (max) =>
      handout.take(() =>
        core.run('take', async () => {
          if (!(max >= 1)) return [];
          return handout.fresh(await takeNow(Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER))));
        }),
      ),

    ack: (ids) =>
      core.run('ack', async () => {
        await chunked(spool, ACK, [spool.group], streamIds(ids));
        handout.drop(ids);
      }),

    async replace(members, aggregate) {
      const reply = await core.run('replace', async () => {
        core.checkMembers(members, isStreamId);
        const args = [spool.group, spool.consumer, JSON.stringify(aggregate), ...members];
        const written = await writeBeforeDeadline(spool, clock, 'replace', args);
        if (written[0] === 'ok') await replicated(spool, 'replace', [String(written[2])]);
        return written;
      });
      if (reply[0] !== 'ok')
        throw core.conflict(String(reply[2]), reply[0] === 'gone' ? 'acknowledged' : 'held elsewhere');
      handout.drop(members);
      return String(reply[2]);
    },

    pending: (ids) =>
      core.run('pending', async () => {
        let replies: unknown[];
        try {
          replies = await chunked(spool, PENDING, [spool.group, loss.before], streamIds(ids));
        } catch (error) {
          if (isGone(error)) throw streamLost('pending', stream, error);
          throw error;
        }
        const found = new Set(replies.map(String));
        return ids.filter((id) => found.has(id));
      }),

    // Never what another consumer holds: a tracker counts these as its own leftovers.
    size: () => core.run('size', async () => Number(await spool.run(SIZE, [spool.group, spool.consumer]))),

    ...deadLetters,

    close: () =>
      core.close(async () => {
        await handout.stop();
        await leaveGroup(spool);
      }),
  };
}
