import type { BillingClient } from '../client.js';
import type { TrackerEvent } from '../core/diagnostics.js';
import { APIError, type BillingError } from '../core/errors/index.js';
import type { Clock } from '../util/clock.js';
import { safely } from '../util/safely.js';
import { unref } from '../util/timers.js';
import type { Aggregation } from './aggregation.js';
import { trackerBackoff } from './backoff.js';
import { batcher } from './batcher.js';
import { causeOf } from './dead-letters.js';
import type { Ledger, LedgerEntry, Settlement } from './ledger.js';
import type { DeadLetterReason, UsageTrackerOptions } from './options.js';
import { isWorthResending } from './send-failure.js';
import type { Spool, SpoolEntry } from './spool.js';
import type { Stop } from './stop.js';
import type { Work } from './work.js';

/** Entries asked of the spool at a time. */
const TAKE_BATCH = 256;
/** How often an idle tracker looks for work another process left (a shared Redis spool) and for its events sent elsewhere. */
const IDLE_POLL_MS = 1000;

/** What a {@link Delivery} needs from the tracker. */
export interface DeliveryOptions {
  billing: BillingClient;
  spool: Spool;
  ledger: Ledger;
  work: Work;
  clock: Clock;
  /** Requests under way at once (one while probing after a failure). */
  concurrency: number;
  /** Aborted when close gives up: sends and waits end, nothing new starts. */
  signal: Stop;
  aggregation: Aggregation | undefined;
  onDeadLetter: UsageTrackerOptions['onDeadLetter'];
  report(error: unknown, event?: LedgerEntry['event']): void;
  /** Publishes a step on `billing-sdk:tracker`. */
  tell(event: TrackerEvent['event']): void;
  /** An entry left the spool: counted, and whatever waited on it woken. */
  settle(entry: LedgerEntry, as: Settlement): void;
}

/**
 * The delivery loop: takes entries from the spool (a previous run's leftovers first), sends them
 * through `billing.usage.record`, `concurrency` at a time, and acknowledges each once it is recorded
 * or dead-lettered. After a transient failure sends pause for a backoff, then one probe at a time
 * until one succeeds; an idle loop looks again every second.
 */
export class Delivery {
  readonly #o: DeliveryOptions;
  readonly #ack: (id: string) => Promise<void>;
  /** Taken, waiting for a send slot (transient failures go back to the front). */
  readonly #ready: LedgerEntry[] = [];
  #started = false;
  #active = 0;
  #taking = false;
  /** Something arrived while a take was under way: take again rather than go idle. */
  #dirty = false;
  #wakeScheduled = false;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #takeFailures = 0;
  // Backoff after transient failures: sends pause, then one probe at a time until one succeeds.
  #failures = 0;
  #generation = 0;
  #paused = false;
  #probing = false;
  #leftoversHanded: () => void = () => {};
  /** Sends of each entry under way or retried, and when the first began: what its dead letter keeps. */
  readonly #attempts = new Map<string, { n: number; first: number }>();
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
   * ledger then, unless another instance took them. Waits through failed takes; never resolves once
   * close gave up (the caller races it with that).
   */
  nextTake(): Promise<void> {
    return new Promise((resolve) => {
      this.#takeWaiters.push(resolve);
      this.wake();
    });
  }

  /** Entries to send as they are (a window of one, members left after a conflict). */
  enqueue(entries: readonly LedgerEntry[]): void {
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
    const { spool, work, clock, signal, report, ledger } = this.#o;
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
      ledger.leftoversHanded();
      this.#leftoversHanded();
    }
    work.end();
    if (entries.length || this.#dirty) this.#pump();
    else this.#idle();
  }

  /** An entry handed by the spool: ours (tracked here), or one a previous run or another instance left. */
  #hand(entry: SpoolEntry): void {
    const known = this.#o.ledger.handed(entry, this.#o.clock.now());
    if (known && !this.#o.aggregation?.offer(known)) this.#ready.push(known);
  }

  /** Nothing to take right now: look again later, and see whether another instance sent our events. */
  #idle(): void {
    if (this.#o.signal.aborted) return;
    // An idle tracker must not keep the process alive; one with work keeps it through its sends and waits.
    this.#idleTimer = unref(
      setTimeout(() => {
        this.#idleTimer = undefined;
        void this.#settledElsewhere().then(() => this.#pump());
      }, IDLE_POLL_MS),
    );
  }

  /** Events tracked here but handed to another instance (a shared spool): settled once it acknowledged them. */
  async #settledElsewhere(): Promise<void> {
    const { ledger, spool, signal, work, settle, report } = this.#o;
    const theirs = ledger.notHanded();
    if (!theirs.length || signal.aborted) return;
    work.begin();
    try {
      const pending = new Set(await spool.pending(theirs.map((e) => e.id)));
      for (const entry of theirs) if (!pending.has(entry.id) && !entry.handed) settle(entry, 'elsewhere');
    } catch (error) {
      report(error);
    } finally {
      work.end();
    }
  }

  async #send(entry: LedgerEntry): Promise<void> {
    const { billing, ledger, work, signal, report, tell } = this.#o;
    this.#active++;
    work.begin();
    ledger.setSending(entry, true);
    const sentIn = this.#generation;
    const attempts = this.#attempts.get(entry.id) ?? { n: 0, first: this.#o.clock.now() };
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
          ledger.setSending(entry, false); // close gave up on it: it stays in the spool
          return;
        }
        if (isWorthResending(error)) {
          ledger.retried();
          report(error, entry.event);
          ledger.setSending(entry, false);
          tell('retry');
          this.#ready.unshift(entry);
          // Sends that were already under way when the backoff began do not lengthen it.
          if (sentIn === this.#generation) this.#backOff(error);
          return;
        }
        reason = { type: 'error', error: error as BillingError };
      }
      if (this.#probing) {
        this.#probing = false;
        this.#failures = 0;
      }
      if (reason && !(await this.#deadLetter(entry, reason))) {
        ledger.setSending(entry, false);
        return;
      }
      this.#attempts.delete(entry.id);
      try {
        if (reason && this.#o.spool.deadLetter) await this.#keep(entry, reason, attempts);
        else await this.#ack(entry.id);
      } catch (error) {
        // Recorded (or dead-lettered) all the same; the entry may be sent again by a later run,
        // under the same key, and dead-lettered again.
        report(error, entry.event);
      }
      this.#o.settle(entry, reason ? 'deadLettered' : 'recorded');
    } finally {
      this.#active--;
      work.end();
      this.#pump();
    }
  }

  /**
   * Tells `onDeadLetter`, before the acknowledgement: a crash in between tells it again rather than
   * never. False when close gave up while the callback ran: the event stays in the spool, told again later.
   */
  async #deadLetter(entry: LedgerEntry, reason: DeadLetterReason): Promise<boolean> {
    const { onDeadLetter, signal } = this.#o;
    return signal.race(safely(onDeadLetter && (() => onDeadLetter(entry.event, reason))).then(() => true));
  }

  /** Moves the entry into the spool's dead-letter store (instead of acknowledging it), with why and when. */
  #keep(entry: LedgerEntry, reason: DeadLetterReason, attempts: { n: number; first: number }): Promise<void> {
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
    const retryAfterMs = error instanceof APIError ? error.retryAfterMs : undefined;
    work.begin();
    signal
      .signal((s) => clock.sleep(trackerBackoff(this.#failures, retryAfterMs), s, () => new Error('stopped')))
      .catch(() => {})
      .then(() => {
        this.#paused = false;
        work.end();
        this.#pump();
      });
  }
}
