import { type Cooldown, type CooldownGrant, cooldownWindow } from '../core/cooldown.js';
import type { StoreError } from '../core/errors/index.js';
import { checkOptions, func, type Rule } from '../internal/checks.js';
import { durationMs, durationMsOrZero } from '../internal/duration.js';
import { safely } from '../util/safely.js';
import type { ServiceScoped } from '../util/service-namespace.js';
import { adaptClient, type RedisClient } from './adapt.js';
import { evalScript, px, timerMs } from './client.js';
import { keyPrefix, tagged } from './keys.js';
import { ACQUIRE, COOL, END } from './lua/cooldown.js';
import { storeFailure, unexpectedReply } from './store-errors.js';

/** Options of {@link redisCooldown}. */
export interface RedisCooldownOptions {
  /**
   * Start of the cooldown's three keys (`<prefix>{<prefix>}:wait`, `…:cooling`, `…:probe`: the
   * prefix is also their hash tag, so on a Redis Cluster they share a slot, and cooldowns of
   * other prefixes land elsewhere); default `'billing-sdk:cooldown:'`. Processes sharing a prefix
   * share one cooldown: give each API key (each rate limit of the service) its own.
   */
  prefix?: string | undefined;
  /**
   * How long the probe may stay out before another request may probe instead, in ms: the longest a
   * crashed prober holds everyone up. Default 10 000.
   */
  probeLeaseMs?: number | undefined;
  /** How often requests waiting for another process's probe ask Redis whether it answered, in ms. Default 50. */
  pollIntervalMs?: number | undefined;
  /** How long to wait for Redis before letting the request go without it, in ms. Default 500. */
  timeoutMs?: number | undefined;
  /**
   * After Redis failed, how long requests go without asking it, in ms, so an outage costs one
   * timeout per pause rather than one per request. Default 1 000.
   */
  pauseAfterErrorMs?: number | undefined;
  /**
   * Told each time Redis fails (an error or a timeout) and the cooldown lets requests go without it,
   * with a {@link billing-sdk!StoreError} (code `'unavailable'`, or `'unexpected_reply'`; the
   * client's error as its `cause`). Not awaited; a throw or rejection here is ignored.
   */
  onError?: ((error: unknown) => void) | undefined;
}

const optionRules = {
  prefix: [keyPrefix],
  probeLeaseMs: [durationMs],
  pollIntervalMs: [timerMs],
  timeoutMs: [timerMs],
  pauseAfterErrorMs: [durationMsOrZero],
  onError: [func],
} satisfies Record<keyof RedisCooldownOptions, Rule[]>;

/**
 * Keeps `cooling` past its window so the next request is a probe; expires only when no process has
 * sent anything for an hour, so a cooldown whose every process died does not linger for ever.
 */
const COOLING_TTL_MS = 60 * 60 * 1000;

/**
 * The {@link Cooldown} of `memoryCooldown`, shared by every process through Redis: after a 429
 * with Retry-After, every process waits until the window ends; then one request, from any process,
 * goes as the probe (under a lease, so a crashed prober blocks no one for longer than
 * `probeLeaseMs`), while the others ask again every `pollIntervalMs` until it is answered. During a
 * 429 storm the service sees one request per window from the whole fleet.
 *
 * Time: windows and leases are Redis keys with a PX expiry, so their end is measured by Redis's
 * clock alone and processes exchange only durations (Retry-After, waits). Hosts whose clocks
 * disagree still agree on the cooldown; the `now` passed in only times the pause after an error.
 *
 * Fails open: when Redis errs or does not answer within `timeoutMs`, the request goes (the cooldown
 * is an optimisation; the service's own 429s still protect it), `onError` is told (a
 * {@link billing-sdk!StoreError}), and Redis is left alone for `pauseAfterErrorMs`. Costs one script
 * per request, and one more after a 429 or a probe.
 *
 * Redis Cluster: the three keys share the prefix's hash tag, so each script runs on the one master
 * of that slot; every request of every process asks that master, so give each API key its prefix
 * and their cooldowns spread. Each script may run twice (a resend after a lost answer) with the
 * same outcome: `acquire` finds the probe lease its token took and answers `probe` again; a 429's
 * window only grows, so reporting it twice changes nothing; ending a probe twice finds it ended.
 *
 * @param client - A connected client: node-redis (`createClient()` or `createCluster()` from
 * `redis`), ioredis (`new Redis()` or `new Cluster()`), or any {@link RedisLike}; see
 * {@link RedisClient}. It is not closed here: the application owns it.
 * @throws {@link billing-sdk!InvalidRequestError} when `client` is none of these, `options` is not
 * a plain object, or an option is unknown or bad (`prefix` no string or holding an empty `{}`, a
 * duration not a number > 0, `onError` not a function), naming each.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { BillingClient } from 'billing-sdk';
 * import { redisCooldown } from 'billing-sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const billing = new BillingClient({ cooldown: redisCooldown(redis, { onError: console.warn }) });
 * ```
 */
export function redisCooldown(
  client: RedisClient,
  options: RedisCooldownOptions = {},
): Cooldown & ServiceScoped<Cooldown> {
  const runner = adaptClient('redisCooldown', client);
  const given = checkOptions('redisCooldown', options, optionRules) as RedisCooldownOptions;
  const prefix = given.prefix ?? 'billing-sdk:cooldown:';
  return {
    ...cooldownAt(runner, given, prefix),
    // The client's windows under its own service's name: another key's (a sandbox's) 429 never
    // holds it, nor another base URL's.
    forService: (service) => cooldownAt(runner, given, `${prefix}${service}:`),
  };
}

/** The cooldown whose keys start with `prefix` (also their hash tag). */
function cooldownAt(
  runner: ReturnType<typeof adaptClient>,
  given: RedisCooldownOptions,
  prefix: string,
): Cooldown {
  const base = tagged(prefix, prefix);
  const keys = [`${base}:wait`, `${base}:cooling`, `${base}:probe`];
  const leaseMs = px(given.probeLeaseMs ?? 10_000);
  const pollMs = given.pollIntervalMs ?? 50;
  const timeoutMs = given.timeoutMs ?? 500;
  const pauseMs = given.pauseAfterErrorMs ?? 1_000;
  let pausedUntil = Number.NEGATIVE_INFINITY;

  /** Leaves Redis alone for a pause and tells `onError`, whose throw never fails a request. */
  const failed = (error: StoreError, now: number): void => {
    pausedUntil = now + pauseMs;
    void safely(() => given.onError?.(error));
  };
  const run = (step: string, script: string, args: (string | number)[]) =>
    evalScript(runner, script, keys, args, timeoutMs).catch((error: unknown) => {
      throw storeFailure(`redisCooldown.${step}`, error);
    });
  /** Reports a 429 (or the probe's answer); never rejects, since the SDK awaits it after each attempt. */
  const settle = async (now: number, retryAfterMs: number | undefined, token: string): Promise<void> => {
    if (now < pausedUntil) return;
    try {
      if (retryAfterMs !== undefined)
        // At most an hour, whatever the 429 asked: one answer never stops the whole fleet for years.
        await run('release', COOL, [px(cooldownWindow(retryAfterMs)), token, COOLING_TTL_MS]);
      else if (token !== '') await run('release', END, [token]);
    } catch (error) {
      failed(error as StoreError, now);
    }
  };
  const free: CooldownGrant = {
    release: (now, retryAfterMs) => (retryAfterMs === undefined ? undefined : settle(now, retryAfterMs, '')),
  };

  return {
    async acquire(now) {
      if (now < pausedUntil) return free;
      const token = crypto.randomUUID();
      let reply: unknown;
      try {
        reply = await run('acquire', ACQUIRE, [token, leaseMs]);
      } catch (error) {
        failed(error as StoreError, now);
        return free;
      }
      const [kind, ms] = Array.isArray(reply) ? reply : [];
      switch (kind) {
        case 'free':
          return free;
        case 'probe':
          return { release: (later, retryAfterMs) => settle(later, retryAfterMs, token) };
        case 'wait':
          return { waitMs: Number(ms) };
        case 'held':
          // Ask again soon, or when the lease ends if sooner: a crashed prober's lease frees the next.
          return { waitMs: Math.max(1, Math.min(pollMs, Number(ms) > 0 ? Number(ms) : pollMs)) };
        default:
          failed(unexpectedReply('redisCooldown.acquire', reply), now);
          return free;
      }
    },
  };
}
