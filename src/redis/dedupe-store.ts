import { StoreError } from '../core/errors/index.js';
import { checkOptions, type Rule } from '../internal/checks.js';
import { durationMs } from '../internal/duration.js';
import { CLAIM_OUTCOMES, type ClaimOutcome, type DedupeStore } from '../webhooks/dedupe.js';
import { adaptClient, type CommandRunner, type RedisClient } from './adapt.js';
import { evalScript, px, timerMs } from './client.js';
import { keyPrefix } from './keys.js';
import { ANSWER, CLAIM, COMPLETE, RELEASE, RENEW } from './lua/dedupe.js';
import { confirmedReplicas, type ReplicaWait, replicaRules, replicaWait } from './replica-wait.js';
import { storeFailure, unexpectedReply } from './store-errors.js';

/** Options of {@link redisDedupeStore}. */
export interface RedisDedupeStoreOptions {
  /** Start of every key, one per `transaction_id`; default `'billing-sdk:webhook:'`. */
  prefix?: string | undefined;
  /**
   * How long a processed id is remembered, in ms: longer than the sender keeps retrying a delivery.
   * Default 7 days.
   */
  doneTtlMs?: number | undefined;
  /**
   * How long to wait for Redis before the call fails (and the handler answers 500, so the sender
   * retries), in ms. Default 2 000.
   */
  timeoutMs?: number | undefined;
  /**
   * How many replicas must hold an id's done mark before `complete` resolves: after the mark, the
   * store sends `WAIT waitReplicas waitTimeoutMs` on the same connection, and when fewer replicas
   * confirmed it in time, `complete` rejects with {@link billing-sdk!StoreError} `'not_replicated'`
   * (the handler answers 500; the sender's retry finds the id done, unless a failover lost the
   * mark, and then runs `onEvent` again: the duplicate this option exists to prevent once the mark
   * was confirmed). Default 0: resolve once the master stored it. The cost: a replication round
   * trip per delivery, and WAIT holds the client's connection meanwhile (other commands on it wait).
   * WAIT is not strong consistency: a mark confirmed by a replica lost with its master is lost too.
   */
  waitReplicas?: number | undefined;
  /** How long WAIT waits for `waitReplicas` replicas before `complete` fails, in ms. Default 1 000. */
  waitTimeoutMs?: number | undefined;
}

const optionRules = {
  prefix: [keyPrefix],
  doneTtlMs: [durationMs],
  timeoutMs: [timerMs],
  ...replicaRules,
} satisfies Record<keyof RedisDedupeStoreOptions, Rule[]>;

/** Claim values carry a prefix, so no token can ever read as `done`. */
const claimValue = (token: string): string => `claim:${token}`;

/**
 * A {@link DedupeStore} in Redis, for several instances receiving webhooks: each step is one Lua
 * script, so two instances given the same delivery at the same moment cannot both claim it. Claims
 * expire through Redis's own clock (PX), so instances with skewed clocks still agree. Keys:
 * `<prefix><transaction_id>`, holding `claim:<token>` while claimed and `done:claim:<token>` once
 * processed (then a newline and the gate's stored answer, with its `idempotency.replay`).
 *
 * Redis Cluster: every script touches the one key of its id, so no step can be `CROSSSLOT`, and
 * the keys carry no hash tag on purpose: each id hashes whole, so deliveries spread over every
 * master (a tag per id space would put every delivery on one master for no gain, the scripts being
 * single-key). A prefix holding a tag of its own (`'{hooks}:'`) puts them all on its one slot.
 *
 * Each script may run twice (ioredis resends a command whose connection dropped before the
 * answer came, and a caller retries a step that timed out) with the same outcome: `claim` with the
 * same token finds its own claim and answers `'claimed'` again; `renew` extends again; `complete`
 * finds its own done mark and answers `true` again; `release` finds nothing left to delete.
 *
 * Pass it as the `dedupe` option of `createWebhookHandler` or `createNodeWebhookHandler`. When
 * Redis is down or slow, every method rejects with a {@link billing-sdk!StoreError} (code
 * `'unavailable'`, or `'unexpected_reply'` when Redis answers what the store never writes) and the
 * handler answers 500 without running `onEvent`, telling its `onError`: the sender retries later.
 *
 * @param client - A connected client: node-redis (`createClient()` or `createCluster()` from
 * `redis`), ioredis (`new Redis()` or `new Cluster()`), or any {@link RedisLike}; see
 * {@link RedisClient}. It is not closed here: the application owns it.
 * @throws {@link billing-sdk!InvalidRequestError} when `client` is none of these, `options` is not
 * a plain object, or an option is unknown or bad (`prefix` no string or holding an empty `{}`, a
 * duration not a number > 0, `waitReplicas` not an integer 0–1000), naming each.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { createNodeWebhookHandler } from 'billing-sdk';
 * import { redisDedupeStore } from 'billing-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const handler = createNodeWebhookHandler({ onEvent, dedupe: redisDedupeStore(redis) });
 * ```
 */
export function redisDedupeStore(client: RedisClient, options: RedisDedupeStoreOptions = {}): DedupeStore {
  const runner = adaptClient('redisDedupeStore', client);
  const given = checkOptions('redisDedupeStore', options, optionRules) as RedisDedupeStoreOptions;
  const replicas = replicaWait(given);
  const prefix = given.prefix ?? 'billing-sdk:webhook:';
  const doneTtlMs = px(given.doneTtlMs ?? 7 * 24 * 60 * 60 * 1000);
  const timeoutMs = given.timeoutMs ?? 2_000;
  const run = (step: string, script: string, id: string, args: (string | number)[]) =>
    evalScript(runner, script, [prefix + id], args, timeoutMs).catch((error: unknown) => {
      throw storeFailure(`redisDedupeStore.${step}`, error);
    });
  return {
    async claim(id, token, ttlMs) {
      const reply = await run('claim', CLAIM, id, [claimValue(token), px(ttlMs)]);
      if (!CLAIM_OUTCOMES.includes(reply)) throw unexpectedReply('redisDedupeStore.claim', reply);
      return reply as ClaimOutcome;
    },
    async renew(id, token, ttlMs) {
      return Number(await run('renew', RENEW, id, [claimValue(token), px(ttlMs)])) === 1;
    },
    async complete(id, token, answer) {
      const args = [claimValue(token), doneTtlMs, ...(answer === undefined ? [] : [answer])];
      const held = Number(await run('complete', COMPLETE, id, args)) === 1;
      if (replicas.replicas > 0) await confirmDone(runner, prefix + id, replicas, timeoutMs);
      return held;
    },
    async release(id, token) {
      await run('release', RELEASE, id, [claimValue(token)]);
    },
    async answer(id) {
      const reply = await run('answer', ANSWER, id, []);
      if (reply === null || reply === undefined) return undefined;
      if (typeof reply !== 'string') throw unexpectedReply('redisDedupeStore.answer', reply);
      return reply;
    },
  };
}

/**
 * After a done mark: resolves once WAIT, on the connection that wrote it, confirmed that
 * `wait.replicas` replicas hold it; otherwise rejects with a {@link StoreError} `'not_replicated'`
 * (the mark stays on the master: the sender's retry finds the id done unless a failover lost it).
 */
async function confirmDone(
  runner: CommandRunner,
  key: string,
  wait: ReplicaWait,
  timeoutMs: number,
): Promise<void> {
  const where = 'redisDedupeStore.complete: the done mark was written';
  let confirmed: number;
  try {
    confirmed = await confirmedReplicas(runner, key, wait, timeoutMs);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new StoreError('not_replicated', `${where}, but WAIT failed: ${why}`, { cause: error });
  }
  if (confirmed < wait.replicas) {
    throw new StoreError(
      'not_replicated',
      `${where}, but ${confirmed} of ${wait.replicas} replica(s) confirmed it within ${wait.timeoutMs} ms: a failover could lose it`,
    );
  }
}
