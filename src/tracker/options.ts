import type { BillingError, InvalidRequestIssue } from '../core/errors/index.js';
import { InvalidRequestError } from '../core/errors/index.js';
import {
  boolean,
  check,
  checkOptions,
  func,
  integer,
  isPlainObject,
  oneOf,
  type Rule,
  required,
} from '../internal/checks.js';
import type { UsageEventRefused } from '../schemas/usage.js';
import { type Clock, clockOf } from '../util/clock.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { memorySpool } from './memory-spool.js';
import type { Spool, SpooledEvent } from './spool.js';

/** Why an event was dead-lettered: the service refused it, or failed it in a way no retry can change. */
export type DeadLetterReason =
  | {
      /** The service answered `accepted: false` (e.g. `invalid_usage_model`: the product is not postpaid). */
      type: 'refused';
      /** The service's answer, with its `error_code`. */
      result: UsageEventRefused;
    }
  | {
      /**
       * The service failed the request for good (a 400, an unknown account (404), a 422…), or it
       * failed retryably `maxAttempts` times (a 5xx, 401, 403 or 409 of this event's own).
       */
      type: 'error';
      /** The error `usage.record` failed with (the last one, after `maxAttempts`). */
      error: BillingError;
    };

/** Options of {@link createUsageTracker}. Checked when the tracker is made, like the client's. */
export interface UsageTrackerOptions {
  /**
   * Where events wait between `track` and the service's answer. Default `memorySpool()`: fast, and
   * lost if the process dies. `fileSpool(dir)` (`billing-sdk/node`) survives a crash or a deploy;
   * `redisSpool(client)` (`billing-sdk/redis`) is shared by several instances. A `redisSpool` or
   * `postgresSpool` without a stream or table name is given this client's service here: the
   * tracker uses that service's stream or table (`deadLetters` of the spool you made reads the
   * unnamed default, not it: name the stream or table when a script needs to reach it too).
   */
  spool?: Spool | undefined;
  /** Requests under way at once. Default 8. */
  concurrency?: number | undefined;
  /**
   * Events tracked and not yet acknowledged (recorded or dead-lettered) past which `track` waits for
   * room, or rejects with `onFull: 'reject'`. Default 100 000.
   */
  maxQueued?: number | undefined;
  /**
   * What `track` does when `maxQueued` events are waiting: `'wait'` (default) until there is room,
   * `'reject'` with a {@link UsageTrackerError} of code `'full'`. Never drops an event silently.
   */
  onFull?: 'wait' | 'reject' | undefined;
  /**
   * Opt-in: sum events of one account, product and meter that have no `metadata` and no `event_key`
   * of yours over `windowMs` into one event, sent under a key fixed when it is formed. Fewer requests,
   * at the cost of per-event metadata (there is none to lose: such events are sent one by one) and of
   * each event's own time (the service dates the sum when it arrives, up to `windowMs` later).
   */
  aggregate?:
    | {
        /** Milliseconds a window stays open after its first event: at most one request per meter per window. */
        windowMs: number;
      }
    | undefined;
  /**
   * Told once per event the service refused (`accepted: false`) or failed for good (400, 404, 422…),
   * or that failed retryably `maxAttempts` times: never retried after that; once this returns (or
   * its promise settles) the event leaves the spool. A durable
   * spool keeps it as a dead letter (`deadLetters(spool)` lists, replays or drops it); with
   * `memorySpool` this is all there is of it, so store it somewhere if it matters. A callback that
   * throws is ignored.
   */
  onDeadLetter?: ((event: SpooledEvent, reason: DeadLetterReason) => void | Promise<void>) | undefined;
  /**
   * Sends of one event that may fail retryably (a 5xx, 401, 403, 409 or an error of your `fetch`)
   * before it becomes a dead letter, told to `onDeadLetter` with the last error and kept in a
   * durable spool's dead-letter store. Default 10 (about two minutes of backoff of its own). A
   * failing event waits out its own backoff while the others keep flowing; a 429, a connection
   * refused or a timeout pauses the whole tracker instead and never counts against an event.
   */
  maxAttempts?: number | undefined;
  /**
   * Told each transient failure (retried with backoff, counted in `stats().retries`) with the event
   * it concerned, and failures of the spool or of a callback without one. A callback that throws is ignored.
   */
  onError?: ((error: unknown, event?: SpooledEvent) => void) | undefined;
  /**
   * For serverless functions and edge workers, where the process may be frozen or dropped once the
   * response is out: the platform's `waitUntil` (`waitUntil` of `@vercel/functions`, Next.js
   * `after`, Netlify's `context.waitUntil`). Each `track` hands it a promise that settles once the
   * event is recorded by the service, dead-lettered, or (with `relay: false`) in the spool; it never
   * rejects. An event handed to it is not held in an aggregation window longer than
   * 1 second. For a per-request context (Cloudflare's `ctx.waitUntil`, Hono's
   * `c.executionCtx.waitUntil`) pass it to `track` instead. See the "Serverless and edge" guide.
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
  /**
   * `false`: a tracker that only writes. `track` appends to the spool (with or without
   * `{ transaction }`) and nothing is ever sent from here; `flush()` resolves once the events are
   * in the spool; `close()` leaves them for a relay (another tracker, or `billing-sdk relay`), and
   * `stats()` counts none of them (they are the relay's). Needs a durable spool shared with the
   * relay (`postgresSpool`, `redisSpool`): with the memory spool it throws
   * {@link InvalidRequestError} naming `options.relay`, and so it does with `aggregate` (summing is
   * the sender's). Default `true`: the tracker sends.
   */
  relay?: boolean | undefined;
}

/**
 * The longest an aggregation window stays open for an event handed to a `waitUntil`: the window
 * and the send must end well within what the platforms allow after the response (Cloudflare
 * Workers 30 s, Vercel and Netlify the function's limit).
 */
export const WAIT_UNTIL_WINDOW_MS = 1000;

/** Sends of one event failing retryably before it becomes a dead letter, by default. */
export const DEFAULT_MAX_ATTEMPTS = 10;

/** Options after defaults and checks. */
export interface ResolvedTrackerOptions {
  spool: Spool;
  concurrency: number;
  maxAttempts: number;
  maxQueued: number;
  onFull: 'wait' | 'reject';
  windowMs: number | undefined;
  onDeadLetter: UsageTrackerOptions['onDeadLetter'];
  onError: UsageTrackerOptions['onError'];
  waitUntil: UsageTrackerOptions['waitUntil'];
  relay: boolean;
  clock: Clock;
}

const SPOOL_METHODS = ['open', 'append', 'take', 'ack', 'replace', 'pending', 'close'] as const;

const spoolRule: Rule = (v) => {
  const spool = v as Record<string, unknown>;
  const missing = SPOOL_METHODS.filter((m) => typeof spool[m] !== 'function');
  if (missing.length) return `must be a Spool (no ${missing.join(', ')} method)`;
  if (spool.size !== undefined && typeof spool.size !== 'function')
    return 'must be a Spool (size must be a method)';
  return typeof spool.durable === 'boolean' ? undefined : 'must be a Spool (durable must be a boolean)';
};

const aggregateRule: Rule = (v, field = 'aggregate'): InvalidRequestIssue[] | string | undefined => {
  if (!isPlainObject(v)) return 'must be a plain object such as { windowMs: 1000 }';
  try {
    check(
      'createUsageTracker',
      v,
      { windowMs: [required, integer(1, MAX_TIMER_MS)] },
      undefined,
      `${field}.`,
    );
  } catch (error) {
    return (error as { issues: InvalidRequestIssue[] }).issues;
  }
  return undefined;
};

const trackerRules: Record<keyof UsageTrackerOptions, Rule[]> = {
  spool: [spoolRule],
  concurrency: [integer(1, 1024)],
  maxAttempts: [integer(1, 1_000_000)],
  maxQueued: [integer(1)],
  onFull: [oneOf(['wait', 'reject'])],
  aggregate: [aggregateRule],
  onDeadLetter: [func],
  onError: [func],
  waitUntil: [func],
  relay: [boolean],
};

/**
 * Checks the options and fills in defaults: a bad one throws {@link InvalidRequestError} naming it
 * (`options.concurrency`) before the tracker exists, and so do options that are not a plain object
 * or `undefined` (`null` included), naming `options`. The clock is a test seam ({@link clockOf}),
 * not a public option.
 */
export function resolveTrackerOptions(options: unknown): ResolvedTrackerOptions {
  const o = checkOptions('createUsageTracker', options, trackerRules) as UsageTrackerOptions;
  const clock = clockOf(options);
  const spool = o.spool ?? memorySpool();
  if (o.relay === false) {
    const issues: InvalidRequestIssue[] = [];
    if (!spool.durable) {
      issues.push({
        field: 'options.relay',
        message: 'false needs a durable spool a relay can drain (the memory spool dies with this process)',
      });
    }
    if (o.aggregate !== undefined) {
      issues.push({
        field: 'options.aggregate',
        message: 'cannot be used with relay: false (the relay that sends the events sums them, not a writer)',
      });
    }
    if (issues.length) throw new InvalidRequestError('createUsageTracker', issues);
  }
  return {
    spool,
    concurrency: o.concurrency ?? 8,
    maxAttempts: o.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    maxQueued: o.maxQueued ?? 100_000,
    onFull: o.onFull ?? 'wait',
    windowMs: o.aggregate?.windowMs,
    onDeadLetter: o.onDeadLetter,
    onError: o.onError,
    waitUntil: o.waitUntil,
    relay: o.relay ?? true,
    clock,
  };
}
