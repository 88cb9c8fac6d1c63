import type { BillingClient } from '../client.js';
import type { TrackerEvent } from '../core/diagnostics.js';
import { APIError, BillingError } from '../core/errors/index.js';
import type { Clock } from '../util/clock.js';
import { safely } from '../util/safely.js';
import type { Stop } from '../util/stop.js';
import { unref } from '../util/timers.js';
import type { Aggregation } from './aggregation.js';
import { trackerBackoff } from './backoff.js';
import { batcher } from './batcher.js';
import { causeOf } from './dead-letters.js';
import type { BookEntry, EventBook, HandedEntry, Outcome } from './event-book.js';
import type { DeadLetterReason, UsageTrackerOptions } from './options.js';
import { concernsService, isWorthResending } from './send-failure.js';
import type { Spool, SpoolEntry } from './spool.js';
import type { Work } from './work.js';

/** Entries asked of the spool at a time. */
const TAKE_BATCH = 256;
/** How often an idle tracker looks for work another process left (a shared Redis spool) and for its events sent elsewhere. */
const IDLE_POLL_MS = 1000;

/** What a {@link Delivery} needs from the tracker. */
export interface DeliveryOptions {
  billing: BillingClient;
  spool: Spool;
  book: EventBook;
  work: Work;
  clock: Clock;
  /** Requests under way at once (one while probing after a failure of the whole service). */
  concurrency: number;
  /** Retryable failures of one event before it becomes a dead letter. */
  maxAttempts: number;
  /** Aborted when close gives up: sends and waits end, nothing new starts. */
  signal: Stop;
  aggregation: Aggregation | undefined;
  onDeadLetter: UsageTrackerOptions['onDeadLetter'];
  report(error: unknown, event?: BookEntry['event']): void;
  /** Publishes a step on `billing-sdk:tracker`. */
  tell(event: TrackerEvent['event']): void;
  /** An entry left the spool: counted, and whatever waited on it woken. */
  finish(entry: BookEntry, as: Outcome): void;
}

/**
 * Different events failing retryably in a row, with no answer in between, that make it the whole
 * service failing rather than each event (see {@link Delivery}).
 */
export const SERVICE_FAILING_EVENTS = 3;

/**
 * The delivery loop: takes entries from the spool (a previous run's leftovers first), sends them
 * through `billing.usage.record`, `concurrency` at a time, and acknowledges each once it is recorded
 * or dead-lettered; an idle loop looks again every second.
 *
 * Retries (issue: one failing event must never stop the others):
 * - an event that fails retryably on its own (a 5xx, 401, 403, 409) waits out a backoff of its own,
 *   out of the queue, while the others keep flowing; after `maxAttempts` such failures it is a dead
 *   letter, so a flush settles;
 * - what concerns the whole service pauses every send: a 429 (its Retry-After), no answer (a
 *   connection refused, a timeout), or {@link SERVICE_FAILING_EVENTS} different events failing in
 *   a row. After that pause, one probe at a time until one is answered. A 429 or no answer never
 *   counts against the event (it is put back first in line); a failed probe of the third kind goes
 *   to its own backoff, so the next probe is another event.
 */
export class Delivery {
  readonly #o: DeliveryOptions;
  readonly #ack: (id: string) => Promise<void>;
  /** Taken, waiting for a send slot (transient failures go back to the front). */
  readonly #ready: HandedEntry[] = [];
  #started = false;
  #active = 0;
  #taking = false;
  /** Something arrived while a take was under way: take again rather than go idle. */
  #dirty = false;
  #wakeScheduled = false;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #takeFailures = 0;
  // Backoff after failures of the whole service: sends pause, then one probe at a time until one is answered.
  #failures = 0;
  /** Entries that failed retryably since the service last answered: several make it the service's failure. */
  readonly #failing = new Set<string>();
  #generation = 0;
  #paused = false;
  #probing = false;
  #leftoversHanded: () => void = () => {};
  /**
   * Of each entry under way or retried: its sends (`n`) and when the first began (what its dead
   * letter keeps), and its retryable failures of its own (`failed`, bounded by `maxAttempts`).
   */
  readonly #attempts = new Map<string, Attempts>();
  /** Waiting for a take that starts after they asked ({@link nextTake}). */
  #takeWaiters: (() => void)[] = [];
  /** Resolves once a take hands fewer entries than asked: what a previous run left has been handed. */
  readonly drained = new Promise<void>((resolve) => {
    this.#leftoversHanded = resolve;
  });

  constructor(options: DeliveryOptions) {
    this.#o = options;
    this.#ack = batcher<string>((ids) => options.work.run(() => options.spool.ack(ids)));
  }

  /** The spool is open: the loop starts, with what it holds. */
  start(): void {
    this.#started = true;
    this.#pump();
  }

  /** Something new is in the spool (or ready): take and send now. */
  wake(): void {
    this.#dirty = true;
    this.#pump();
  }

  /**
   * {@link wake} on the next turn of the event loop, once for a burst of `track` calls: starting a
   * send builds its request, which is not the caller's to pay for (measured: the calls that started
   * one cost 50–250 µs instead of a few).
   */
  wakeSoon(): void {
    this.#dirty = true;
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setTimeout(() => {
      this.#wakeScheduled = false;
      this.#pump();
    }, 0);
  }

  /**
   * Resolves once a take that started after this call handed everything the spool had for this
   * process (fewer entries than asked): rows of transactions committed before it are known to the
   * book then, unless another instance took them. Waits through failed takes; never resolves once
   * close gave up (the caller races it with that).
   */
  nextTake(): Promise<void> {
    return new Promise((resolve) => {
      this.#takeWaiters.push(resolve);
      this.wake();
    });
  }

  /** Entries to send as they are (a window of one, members left after a conflict). */
  enqueue(entries: readonly HandedEntry[]): void {
    this.#ready.push(...entries);
    this.#pump();
  }

  /** Close gave up (the signal aborted): no more polling. */
  stop(): void {
    this.#stopIdling();
  }

  #stopIdling(): void {
    if (this.#idleTimer) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  #pump(): void {
    if (!this.#started || this.#o.signal.aborted) return;
    const limit = this.#probing ? 1 : this.#o.concurrency;
    while (!this.#paused && this.#ready.length && this.#active < limit) void this.#send(this.#ready.shift()!);
    if (!this.#taking && this.#ready.length < this.#o.concurrency) void this.#take();
  }

  async #take(): Promise<void> {
    const { spool, work, clock, signal, report, book } = this.#o;
    this.#taking = true;
    this.#dirty = false;
    this.#stopIdling();
    work.begin();
    const waiting = this.#takeWaiters.splice(0);
    let entries: SpoolEntry[];
    try {
      entries = await spool.take(TAKE_BATCH);
      this.#takeFailures = 0;
    } catch (error) {
      this.#takeWaiters.unshift(...waiting);
      report(error);
      this.#takeFailures++;
      await signal
        .signal((s) => clock.sleep(trackerBackoff(this.#takeFailures), s, () => new Error('stopped')))
        .catch(() => {});
      this.#taking = false;
      work.end();
      this.#pump();
      return;
    }
    this.#taking = false;
    for (const entry of entries) this.#hand(entry);
    // A full batch may have left more behind: the waiters wait for a take that empties it.
    if (entries.length < TAKE_BATCH) for (const resolve of waiting) resolve();
    else this.#takeWaiters.unshift(...waiting);
    // A flush (or close) waits for these too: their windows must not make it wait out windowMs.
    this.#o.aggregation?.taken();
    if (entries.length < TAKE_BATCH) {
      book.leftoversHanded();
      this.#leftoversHanded();
    }
    work.end();
    if (entries.length || this.#dirty) this.#pump();
    else this.#idle();
  }

  /** An entry handed by the spool: ours (tracked here), or one a previous run or another instance left. */
  #hand(entry: SpoolEntry): void {
    const known = this.#o.book.handed(entry, this.#o.clock.now());
    if (known && !this.#o.aggregation?.offer(known)) this.#ready.push(known);
  }

  /** Nothing to take right now: look again later, and see whether another instance sent our events. */
  #idle(): void {
    if (this.#o.signal.aborted) return;
    // An idle tracker must not keep the process alive; one with work keeps it through its sends and waits.
    this.#idleTimer = unref(
      setTimeout(() => {
        this.#idleTimer = undefined;
        void this.#finishedElsewhere().then(() => this.#pump());
      }, IDLE_POLL_MS),
    );
  }

  /** Events tracked here but handed to another instance (a shared spool): finished once it acknowledged them. */
  async #finishedElsewhere(): Promise<void> {
    const { book, spool, signal, work, finish, report } = this.#o;
    const theirs = book.notHanded();
    if (!theirs.length || signal.aborted) return;
    work.begin();
    try {
      const pending = new Set(await spool.pending(theirs.map((e) => e.id)));
      for (const entry of theirs) if (!pending.has(entry.id) && !entry.handed) finish(entry, 'elsewhere');
    } catch (error) {
      report(error);
    } finally {
      work.end();
    }
  }

  async #send(entry: HandedEntry): Promise<void> {
    const { billing, book, work, signal } = this.#o;
    this.#active++;
    work.begin();
    book.setSending(entry, true);
    const sentIn = this.#generation;
    const attempts = this.#attempts.get(entry.id) ?? { n: 0, failed: 0, first: this.#o.clock.now() };
    attempts.n++;
    this.#attempts.set(entry.id, attempts);
    try {
      let reason: DeadLetterReason | undefined;
      try {
        const result = await signal.signal((s) => billing.usage.record(entry.event, { signal: s }));
        if (!result.accepted) reason = { type: 'refused', result };
      } catch (error) {
        if (signal.aborted) {
          this.#attempts.delete(entry.id);
          book.setSending(entry, false); // close gave up on it: it stays in the spool
          return;
        }
        if (isWorthResending(error)) {
          reason = this.#retryLater(entry, error, attempts, sentIn);
          if (!reason) return;
        } else {
          reason = { type: 'error', error: error as BillingError };
        }
      }
      if (!reason || reason.type === 'refused' || !isWorthResending(reason.error)) this.#answered();
      if (reason && !(await this.#deadLetter(entry, reason))) {
        book.setSending(entry, false);
        return;
      }
      this.#attempts.delete(entry.id);
      this.#failing.delete(entry.id);
      try {
        if (reason && this.#o.spool.deadLetter) await this.#keep(entry, reason, attempts);
        else await this.#ack(entry.id);
      } catch (error) {
        // Recorded (or dead-lettered) all the same; the entry may be sent again by a later run,
        // under the same key, and dead-lettered again.
        report(this.#o, error, entry);
      }
      this.#o.finish(entry, reason ? 'deadLettered' : 'recorded');
    } finally {
      this.#active--;
      work.end();
      this.#pump();
    }
  }

  /** The service answered (recorded, or refused an event for good): it is up, probing ends. */
  #answered(): void {
    this.#failing.clear();
    if (this.#probing) {
      this.#probing = false;
      this.#failures = 0;
    }
  }

  /**
   * A retryable failure of `entry`'s send: the entry is sent again later, alone or after a pause
   * of every send (see {@link Delivery}), or, past `maxAttempts` failures of its own, the dead
   * letter's reason is returned.
   */
  #retryLater(
    entry: HandedEntry,
    error: unknown,
    attempts: Attempts,
    sentIn: number,
  ): DeadLetterReason | undefined {
    const { book, tell } = this.#o;
    const wholeService = concernsService(error);
    if (!wholeService && ++attempts.failed >= this.#o.maxAttempts) {
      return { type: 'error', error: asBillingError(error) };
    }
    book.retried();
    report(this.#o, error, entry);
    book.setSending(entry, false);
    tell('retry');
    // Sends that were already under way when a pause began do not lengthen it.
    const fresh = sentIn === this.#generation;
    if (wholeService) {
      // Not the event's fault: first in line again, sent once the pause is over.
      this.#ready.unshift(entry);
      if (fresh) this.#backOff(error);
      return undefined;
    }
    this.#failing.add(entry.id);
    if (fresh && (this.#probing || this.#failing.size >= SERVICE_FAILING_EVENTS)) this.#backOff(error);
    this.#wait(entry, trackerBackoff(attempts.failed, retryAfterOf(error)));
    return undefined;
  }

  /** `entry` waits out a backoff of its own, out of the queue, then is sent again in turn. */
  #wait(entry: HandedEntry, ms: number): void {
    const { clock, signal, work } = this.#o;
    work.begin();
    signal
      .signal((s) => clock.sleep(ms, s, () => new Error('stopped')))
      .then(
        () => {
          this.#ready.push(entry);
          work.end();
          this.#pump();
        },
        () => work.end(), // close gave up: the entry stays in the spool
      );
  }

  /**
   * Tells `onDeadLetter`, before the acknowledgement: a crash in between tells it again rather than
   * never. False when close gave up while the callback ran: the event stays in the spool, told again later.
   */
  async #deadLetter(entry: HandedEntry, reason: DeadLetterReason): Promise<boolean> {
    const { onDeadLetter, signal } = this.#o;
    return signal.race(safely(onDeadLetter && (() => onDeadLetter(entry.event, reason))).then(() => true));
  }

  /** Moves the entry into the spool's dead-letter store (instead of acknowledging it), with why and when. */
  #keep(entry: BookEntry, reason: DeadLetterReason, attempts: { n: number; first: number }): Promise<void> {
    const { spool, work, clock } = this.#o;
    const letter = {
      id: entry.id,
      reason: causeOf(reason),
      attempts: attempts.n,
      firstAttemptAt: new Date(attempts.first).toISOString(),
      deadLetteredAt: new Date(clock.now()).toISOString(),
    };
    return work.run(() => spool.deadLetter!([letter]));
  }

  #backOff(error: unknown): void {
    const { clock, signal, work } = this.#o;
    this.#failures++;
    this.#generation++;
    this.#paused = true;
    this.#probing = true;
    work.begin();
    signal
      .signal((s) =>
        clock.sleep(trackerBackoff(this.#failures, retryAfterOf(error)), s, () => new Error('stopped')),
      )
      .catch(() => {})
      .then(() => {
        this.#paused = false;
        work.end();
        this.#pump();
      });
  }
}

/** An entry's sends so far (see `Delivery`'s attempts). */
interface Attempts {
  /** Sends begun. */
  n: number;
  /** Retryable failures that were the event's own (not a 429, not "no answer"). */
  failed: number;
  /** When the first send began, on the tracker's clock. */
  first: number;
}

/** The server's Retry-After of a failed send, when it gave one. */
function retryAfterOf(error: unknown): number | undefined {
  return error instanceof APIError ? error.retryAfterMs : undefined;
}

/** What a dead letter carries of a failure: the SDK's error, or one that wraps another (a broken `fetch`). */
function asBillingError(error: unknown): BillingError {
  if (error instanceof BillingError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new BillingError(`usage.record failed: ${message}`, { cause: error });
}

/** Tells `onError` a failure concerning `entry`'s event. */
function report(options: DeliveryOptions, error: unknown, entry: BookEntry): void {
  options.report(error, entry.event);
}
