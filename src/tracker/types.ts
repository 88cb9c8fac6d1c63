import type { UsageWriteParams } from '../resources/usage.js';
import type { TrackerStats } from './event-book.js';

// The tracker's public shape apart from its machinery (tracker.ts): what users hold and pass, and
// what gate/ depends on, without pulling in the sender itself.

export type { TrackerStats } from './event-book.js';

/** Options of {@link UsageTracker.close}. */
export interface TrackerCloseOptions {
  /**
   * Milliseconds allowed to send what is queued before giving up; what is left stays in a durable
   * spool for the next start. Default 10 000; `Infinity` waits for everything; 0 sends nothing more.
   */
  timeoutMs?: number | undefined;
}

/** Options of {@link UsageTracker.track}. */
export interface TrackOptions {
  /**
   * The application's own open database transaction to write the event through, with a spool that
   * can take part in one (`postgresSpool` of `billing-sdk/postgres`): a node-postgres client inside
   * `BEGIN`, the `tx` of postgres.js `sql.begin`, a Kysely `trx` or a Drizzle `tx`. The event is one INSERT of that transaction: it
   * is sent once the transaction commits (taken like an entry another instance left, woken by the
   * commit's NOTIFY), and never if it rolls back. Such an event is counted in `stats()` once the
   * tracker took it after the commit; `flush()` (and so `close()`) takes once more, so it waits for
   * the events of transactions committed before it that this instance takes (another instance may
   * take and send some). It is never summed with others by `aggregate` (it was written before the
   * tracker could). With a spool that cannot, or a value that is no transaction the spool can
   * write through (`null`, `{}`, `0` included: given, so never read as "no transaction"):
   * {@link InvalidRequestError} naming `options.transaction`, nothing queued. Leave it out (or
   * `undefined`) to track outside a transaction.
   */
  transaction?: unknown;
  /**
   * The request's own `waitUntil` (Cloudflare's `ctx.waitUntil`, Hono's `c.executionCtx.waitUntil`,
   * Netlify's `context.waitUntil`), used for this event instead of the tracker's `waitUntil`
   * option: it is handed, at once, a promise that settles once the event is recorded by the
   * service or dead-lettered (with `relay: false`, or with `transaction`, once it is written); it
   * never rejects, whatever `track` does. The event is not held in an aggregation window longer
   * than 1 second. Pass it as a function that keeps its object
   * (`(p) => ctx.waitUntil(p)`, or `ctx.waitUntil.bind(ctx)`).
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined;
}

/** What {@link UsageTracker.close} left. */
export interface TrackerCloseResult {
  /**
   * Events the spool still holds for this tracker, neither recorded nor dead-lettered: those it
   * tracked, and what a previous run left (as far as the spool can count them). Kept by a durable
   * spool for the next start, lost with a memory spool. Always 0 with `relay: false`: what it
   * wrote is the relay's.
   */
  unsent: number;
}

/** The background sender made by {@link createUsageTracker}. */
export interface UsageTracker {
  /**
   * Checks the event as `usage.record` does (a bad one rejects with {@link InvalidRequestError} and
   * nothing is queued), fixes its `event_key` (yours, or a new UUID) and resolves once the event is in
   * the spool, with the key it will be recorded under. Waits for room when `maxQueued` events are
   * waiting (or rejects with {@link UsageTrackerError} `'full'` under `onFull: 'reject'`); rejects with
   * `'closed'` after {@link close}, and with a `SpoolError` when the spool could not store it (or
   * could not be opened: each call tries again). When the spool may have stored it all the same
   * (an answer too late or lost, a sync that failed), that error says `outcome: 'unknown'` and
   * carries its `eventKey`: track it again under that key, and it is recorded once. With `options.transaction`, the event is written
   * through that transaction instead (see {@link TrackOptions}). With a `waitUntil` (the
   * tracker's option, or `options.waitUntil`), that function is handed a promise that settles once
   * the event is recorded or dead-lettered (see {@link TrackOptions.waitUntil}).
   */
  track(
    event: UsageWriteParams,
    options?: TrackOptions,
  ): Promise<{
    /** The key the event is recorded under: yours, or the one generated for it. */
    event_key: string;
  }>;
  /**
   * Resolves once every event tracked before it is recorded or dead-lettered (and what a previous run
   * left in a durable spool was sent). Windows of aggregation close at once. Waits through an outage;
   * rejects with {@link UsageTrackerError} `'closed'` if `close` gives up first, and with the spool's
   * error if it cannot be opened. After `close`, resolves at once. With `relay: false`, resolves once
   * every event tracked before it is in the spool.
   */
  flush(): Promise<void>;
  /**
   * Stops taking events, sends what is queued (what a previous run left included) within
   * `timeoutMs`, then releases the spool. Resolves with how many events were left unsent. Call it on
   * shutdown (SIGTERM).
   */
  close(options?: TrackerCloseOptions): Promise<TrackerCloseResult>;
  /** Counters, true at every moment. */
  stats(): TrackerStats;
}
