import { type BillingClient, serviceOf } from '../client.js';
import type { TrackerEvent } from '../core/diagnostics.js';
import { InvalidRequestError, UsageTrackerError } from '../core/errors/index.js';
import { check, nonNegative } from '../internal/checks.js';
import { type UsageWriteParams, usageWriteRules } from '../resources/usage.js';
import type { Clock } from '../util/clock.js';
import { channel, publish } from '../util/diagnostics.js';
import { safely } from '../util/safely.js';
import { scopedTo } from '../util/service-namespace.js';
import { Stop } from '../util/stop.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { randomUUID } from '../util/uuid.js';
import { Aggregation, isSummable } from './aggregation.js';
import { appendFailure } from './append-failure.js';
import { Backpressure } from './backpressure.js';
import { Delivery } from './delivery.js';
import { type BookEntry, EventBook, type Outcome, type TrackerStats } from './event-book.js';
import {
  type ResolvedTrackerOptions,
  resolveTrackerOptions,
  type UsageTrackerOptions,
  WAIT_UNTIL_WINDOW_MS,
} from './options.js';
import type { Spool, SpooledEvent } from './spool.js';
import { checkStorable } from './storable-event.js';
import { checkTrackOptions } from './track-options.js';
import type { TrackerCloseOptions, TrackerCloseResult, TrackOptions, UsageTracker } from './types.js';
import { Work } from './work.js';

const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/** Where the tracker's steps are published (see core/diagnostics.ts); `undefined` in browsers. */
const trackerChannel = /* @__PURE__ */ channel('billing-sdk:tracker');

/**
 * Records usage in the background: `track` puts an event in a spool and returns at once; the
 * tracker sends it through `billing.usage.record` (so the client's retries, cooldown and timeouts
 * apply), `concurrency` at a time, and keeps sending what fails transiently, with backoff, until it
 * is recorded. Every event gets its key before it is stored, so an event is recorded exactly once
 * whatever fails: a repeated key is answered `idempotent: true` by the service.
 *
 * - **Nothing is dropped silently**: a full queue waits (or rejects typed); a refusal goes to
 *   `onDeadLetter`, once.
 * - **Durability is the spool's**: `memorySpool()` (default) loses what was not sent when the process
 *   dies; `fileSpool(dir)` (`billing-sdk/node`) and `redisSpool(client)` (`billing-sdk/redis`) hand
 *   it to the next start, which sends it first with the same keys.
 * - **Sending starts at once**: the spool is opened when the tracker is made, and what a previous run
 *   left is sent without waiting for a `track`. A spool that cannot be opened is told to `onError`
 *   (never thrown from here); `track` and `flush` then reject with its error, each trying again.
 * - **Aggregation** (`aggregate: { windowMs }`, opt-in) sums events of one meter without metadata or
 *   key of yours into one request per window.
 *
 * @param billing - The client to send with.
 * @param options - {@link UsageTrackerOptions}.
 * @throws {@link InvalidRequestError} naming the bad option, before anything starts.
 *
 * @example
 * ```ts
 * import { BillingClient, createUsageTracker } from 'billing-sdk';
 *
 * const billing = new BillingClient();
 * const tracker = createUsageTracker(billing, {
 *   onDeadLetter: (event, reason) => console.error('usage refused', event.event_key, reason),
 * });
 * // In a request handler: costs microseconds, never waits for the service.
 * await tracker.track({ account_ref_id: 'acct_1', product_code: 'api-gateway', meter_code: 'api_calls', quantity: 1 });
 * // On shutdown: send what is queued, within 10 s.
 * process.once('SIGTERM', () => void tracker.close({ timeoutMs: 10_000 }).then(({ unsent }) => process.exit(unsent ? 1 : 0)));
 * ```
 */
export function createUsageTracker(billing: BillingClient, options?: UsageTrackerOptions): UsageTracker {
  if (typeof (billing as { usage?: { record?: unknown } } | null)?.usage?.record !== 'function') {
    throw new InvalidRequestError('createUsageTracker', [
      { field: 'billing', message: 'must be a BillingClient' },
    ]);
  }
  const resolved = resolveTrackerOptions(options);
  // A spool with default names (a stream, a table) is this service's: another service sharing the
  // Redis or the database (a sandbox beside live) never sends its events with its own key.
  resolved.spool = scopedTo(resolved.spool, serviceOf(billing));
  const tracker = new Tracker(billing, resolved);
  return {
    track: (event, trackOptions) => tracker.track(event, trackOptions),
    flush: () => tracker.flush(),
    close: (closeOptions) => tracker.close(closeOptions),
    stats: () => tracker.stats(),
  };
}

/** `done` of an event with nothing left to wait for: one settled promise for all of them. */
const DONE: Promise<void> = Promise.resolve();

function closedError(): UsageTrackerError {
  return new UsageTrackerError(
    'closed',
    'usageTracker.track: the tracker is closed; the event was not queued',
  );
}

/**
 * The tracker's lifecycle (open, running, closing, closed) and its three calls, over its parts:
 * the {@link EventBook} (what the spool holds for it), {@link Backpressure}, {@link Delivery} and,
 * when asked for, {@link Aggregation}.
 */
class Tracker {
  readonly #spool: Spool;
  readonly #clock: Clock;
  readonly #report: (error: unknown, event?: SpooledEvent) => void;
  /** Aborted when close gives up: sends and waits end, nothing new starts. */
  readonly #stop = new Stop();
  /** Resolves `false` once close gave up. */
  readonly #book = new EventBook();
  readonly #work = new Work();
  readonly #backpressure: Backpressure;
  readonly #aggregation: Aggregation | undefined;
  readonly #delivery: Delivery;
  #phase: 'new' | 'running' | 'closing' | 'closed' = 'new';
  #opening: Promise<void> | undefined;
  #closing: Promise<TrackerCloseResult> | undefined;
  /** Whether an event was tracked through a transaction: flush then takes once more (see flush). */
  #transactional = false;
  /** Stops the spool's wake-ups (its `watch`), once the spool was opened. */
  #unwatch: (() => void) | undefined;
  /** Appends under way: a flush waits for them. */
  readonly #appending = new Set<Promise<unknown>>();
  readonly #waitUntil: UsageTrackerOptions['waitUntil'];
  /** False for a tracker that only writes (`relay: false`): nothing is taken or sent here. */
  readonly #relay: boolean;

  constructor(billing: BillingClient, options: ResolvedTrackerOptions) {
    const { spool, concurrency, maxQueued, onFull, windowMs, onDeadLetter, onError, clock } = options;
    this.#spool = spool;
    this.#waitUntil = options.waitUntil;
    this.#relay = options.relay;
    this.#clock = clock;
    this.#report = (error, event) => void safely(onError && (() => onError(error, event)));
    const signal = this.#stop;
    this.#backpressure = new Backpressure(maxQueued, onFull, () => this.#book.known);
    const shared = { spool, clock, signal, book: this.#book, work: this.#work, report: this.#report };
    const finish = (entry: BookEntry, as: Outcome) => this.#finish(entry, as);
    this.#aggregation =
      windowMs === undefined
        ? undefined
        : new Aggregation({
            ...shared,
            windowMs,
            finish,
            enqueue: (entries) => this.#delivery.enqueue(entries),
            wake: () => this.#delivery.wake(),
          });
    this.#delivery = new Delivery({
      ...shared,
      billing,
      concurrency,
      maxAttempts: options.maxAttempts,
      aggregation: this.#aggregation,
      onDeadLetter,
      finish,
      tell: (event) => this.#tell(event),
    });
    // Opened now, so what the spool holds is sent without waiting for a track; a failure goes to
    // onError, never thrown from the factory (track and flush try again, and reject with it).
    this.#start().catch((error: unknown) => this.#report(error));
  }

  async track(event: UsageWriteParams, options?: TrackOptions): Promise<{ event_key: string }> {
    const { transaction, waitUntil = this.#waitUntil } = checkTrackOptions(options);
    if (!waitUntil) return (await this.#track(event, transaction, false)).tracked;
    // Handed before anything else, while the request is surely still live: some platforms refuse a
    // waitUntil once the response is out.
    let hand!: (done: Promise<void>) => void;
    try {
      waitUntil(new Promise<void>((resolve) => (hand = resolve)));
    } catch (error) {
      this.#report(error);
    }
    const tracking = this.#track(event, transaction, true);
    hand(
      tracking.then(
        ({ done }) => done,
        () => undefined,
      ),
    );
    return (await tracking).tracked;
  }

  /**
   * `track`, with `done`: settles once the event is recorded or dead-lettered, or once it is in the
   * spool when this tracker does not send it (`relay: false`, a transaction's), or once close gave
   * up; never rejects. `prompt`: the event was handed to a `waitUntil`, so its window is short.
   */
  async #track(
    event: UsageWriteParams,
    transaction: unknown,
    prompt: boolean,
  ): Promise<{ tracked: { event_key: string }; done: Promise<void> }> {
    if (transaction !== undefined && typeof this.#spool.appendIn !== 'function') {
      throw new InvalidRequestError('usageTracker.track', [
        {
          field: 'options.transaction',
          message:
            "needs a spool that can write through a transaction (one with the Spool contract's appendIn); nothing was queued",
        },
      ]);
    }
    if (this.#phase === 'closing' || this.#phase === 'closed') throw closedError();
    const checked = check('usageTracker.track', event, usageWriteRules) as unknown as UsageWriteParams;
    const summable = isSummable(checked);
    const event_key = checked.event_key ?? randomUUID();
    // check() made `checked` for this call alone: keyed in place, one object less per event.
    checked.event_key = event_key;
    const spooled = checked as SpooledEvent;
    const batch = [spooled];
    // What no spool could store is refused here, before any count or append moves (each spool
    // checks again: a spool is also used on its own).
    checkStorable('usageTracker.track', batch);
    if (transaction !== undefined) {
      await this.#trackIn(transaction, spooled);
      return { tracked: { event_key }, done: DONE };
    }
    const since = this.#clock.now();
    // Opened once: a running tracker does not wait a turn for it on every call.
    if (this.#phase !== 'running') await this.#start();
    if (this.#phase !== 'running') throw closedError();
    const wait = this.#backpressure.reserve();
    if (wait) await wait;
    if (this.#phase !== 'running') {
      // close began while this call waited for room: refused, so close's flush sees every event it must.
      this.#backpressure.release();
      throw closedError();
    }
    this.#aggregation?.mark(summable, event_key, prompt ? WAIT_UNTIL_WINDOW_MS : undefined);
    const appended = new Promise<string[]>((resolve) => resolve(this.#spool.append(batch)));
    this.#appending.add(appended);
    let id: string;
    try {
      id = (await appended)[0] as string;
      // A writer's events are the relay's: nothing of them is counted or sent here.
      if (!this.#relay) return { tracked: { event_key }, done: DONE };
      // The spool keeps the event; the book only with aggregation, which needs its key until handed.
      this.#book.appended(id, this.#aggregation ? spooled : undefined, since);
    } catch (error) {
      this.#aggregation?.forget(event_key);
      throw appendFailure(error, event_key);
    } finally {
      this.#appending.delete(appended);
      this.#backpressure.release();
    }
    this.#tell('queued');
    this.#delivery.wakeSoon();
    return { tracked: { event_key }, done: prompt ? this.#sent(id) : DONE };
  }

  /**
   * Settles once the entry `id` left the spool and then every send, take and wait under way is
   * done (or once close gave up). The second half is for workerd: a request's context that ends
   * cancels the I/O begun in it, and a send begun for another request's event may have begun in
   * this one's (the loop starts the next send where the last one ended).
   */
  async #sent(id: string): Promise<void> {
    await this.#stop.race(this.#book.finished([id]));
    await this.#stop.race(this.#work.quiet());
  }

  /**
   * `track` through the caller's transaction: one `appendIn`, nothing in the book (the
   * transaction may still roll back), no backpressure (nothing is held here). It never waits for
   * the spool's open: that may need a connection the caller's own transactions hold, which would
   * wait for this call. After the commit the delivery loop takes the entry like one another
   * instance left: the spool's watch wakes it once the spool is open.
   */
  async #trackIn(transaction: unknown, spooled: SpooledEvent): Promise<void> {
    // An open that failed is tried again here, in the background, as track and flush try it.
    if (this.#opening === undefined) this.#start().catch((error: unknown) => this.#report(error));
    try {
      await (this.#spool.appendIn as NonNullable<Spool['appendIn']>)(transaction, [spooled]);
    } catch (error) {
      // The spool names its own argument; the caller gave options.transaction.
      if (error instanceof InvalidRequestError && error.issues.some((i) => i.field === 'transaction')) {
        throw new InvalidRequestError(
          'usageTracker.track',
          error.issues.map((i) => (i.field === 'transaction' ? { ...i, field: 'options.transaction' } : i)),
        );
      }
      throw error;
    }
    this.#transactional = true;
  }

  async flush(): Promise<void> {
    if (this.#phase === 'closed') return;
    this.#aggregation?.beginFlush();
    try {
      const sent = (async () => {
        await this.#start();
        if (!this.#relay) {
          await Promise.allSettled([...this.#appending]);
          return true;
        }
        await this.#delivery.drained;
        await Promise.allSettled([...this.#appending]);
        // Rows of transactions that committed since are in no book yet: one take finds them.
        if (this.#transactional) await this.#delivery.nextTake();
        this.#aggregation?.formAll();
        await this.#book.finishedAll();
        return true;
      })();
      // A flush still waiting when close gives up would wait for ever: it fails instead, typed.
      if (!(await this.#stop.race(sent))) {
        throw new UsageTrackerError(
          'closed',
          `usageTracker.flush: the tracker was closed with ${this.#book.outstanding} events unsent`,
        );
      }
    } finally {
      this.#aggregation?.endFlush();
    }
  }

  close(options?: TrackerCloseOptions): Promise<TrackerCloseResult> {
    let timeoutMs: number;
    try {
      ({ timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS } = check(
        'usageTracker.close',
        options,
        { timeoutMs: [nonNegative] },
        undefined,
        'options.',
      ) as TrackerCloseOptions);
    } catch (error) {
      return Promise.reject(error);
    }
    this.#closing ??= this.#shutDown(timeoutMs);
    return this.#closing;
  }

  stats(): TrackerStats {
    return this.#book.stats(this.#clock.now());
  }

  /**
   * Opens the spool once (again after a failed open), learns what it holds for this process, then
   * starts the delivery loop: leftovers come first.
   */
  #start(): Promise<void> {
    this.#opening ??= this.#open().then(
      () => {
        if (this.#phase === 'new') this.#phase = 'running';
        if (!this.#relay) return;
        this.#delivery.start();
        // Entries other instances (or committed transactions) add: taken at once, not on the idle poll.
        this.#unwatch ??= this.#spool.watch?.(() => this.#delivery.wake());
      },
      (error: unknown) => {
        this.#opening = undefined;
        throw error;
      },
    );
    return this.#opening;
  }

  async #open(): Promise<void> {
    await this.#spool.open();
    if (!this.#relay || typeof this.#spool.size !== 'function') return;
    try {
      this.#book.leftoversFound(await this.#spool.size(), this.#clock.now());
    } catch (error) {
      this.#report(error); // counted as they are taken instead
    }
  }

  async #shutDown(timeoutMs: number): Promise<TrackerCloseResult> {
    const wasStarted = this.#opening !== undefined;
    this.#phase = 'closing';
    this.#backpressure.refuseAll(closedError);
    if (!wasStarted) {
      this.#phase = 'closed'; // the spool never opened: nothing of ours is in it
      return { unsent: 0 };
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await this.#opening;
      const deadline = new Promise<void>((resolve) => {
        if (timeoutMs <= MAX_TIMER_MS) timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([this.flush(), deadline]);
    } catch (error) {
      this.#report(error); // the spool never opened: nothing of ours is in it
      this.#phase = 'closed';
      return { unsent: 0 };
    } finally {
      clearTimeout(timer);
    }
    // Whatever is still under way is abandoned: aborted sends stay in the spool, unsent.
    this.#stop.abort();
    this.#aggregation?.stop();
    this.#delivery.stop();
    this.#unwatch?.();
    await this.#work.quiet();
    this.#phase = 'closed';
    const unsent = this.#book.outstanding;
    try {
      await this.#spool.close();
    } catch (error) {
      this.#report(error);
    }
    return { unsent };
  }

  /** The entry left the spool: counted by the book, told, and room made for a waiting track. */
  #finish(entry: BookEntry, as: Outcome): void {
    this.#book.finish(entry, as);
    // When another instance sent it, it was never handed here.
    if (entry.event) this.#aggregation?.forget(entry.event.event_key);
    if (as === 'recorded') this.#tell('sent');
    else if (as === 'deadLettered') this.#tell('dead-letter');
    this.#backpressure.grant();
  }

  /** Publishes a step on `billing-sdk:tracker` with the queue as it is after it. */
  #tell(event: TrackerEvent['event']): void {
    // Asked first: no closure made on every track call when nobody listens.
    if (!trackerChannel?.hasSubscribers) return;
    publish(
      trackerChannel,
      (): TrackerEvent => ({ event, queued: this.#book.queued, inFlight: this.#book.inFlight }),
    );
  }
}
