import { SpoolError } from '../core/errors/index.js';
import type { UsageWriteParams } from '../resources/usage.js';
import type { Clock } from '../util/clock.js';
import type { Stop } from '../util/stop.js';
import { trackerBackoff } from './backoff.js';
import type { BookEntry, EventBook, HandedEntry, Outcome } from './event-book.js';
import type { Spool, SpooledEvent } from './spool.js';
import { createSumWindows, type SumWindows } from './sum-windows.js';
import type { Work } from './work.js';

/** What an {@link Aggregation} needs from the tracker. */
export interface AggregationOptions {
  windowMs: number;
  clock: Clock;
  spool: Spool;
  book: EventBook;
  work: Work;
  /** Aborted when close gives up: replacements under way stop, their members stay in the spool. */
  signal: Stop;
  report(error: unknown): void;
  /** Entries to send as they are: a window of one event, members left after a conflict. */
  enqueue(entries: HandedEntry[]): void;
  /** An aggregate is in the spool, ready to be taken and sent. */
  wake(): void;
  /** An entry left the spool without being sent here. */
  finish(entry: BookEntry, as: Outcome): void;
}

/** Whether an event as the caller gave it may be summed: no key of the caller's, no metadata. */
export const isSummable = (event: UsageWriteParams): boolean =>
  event.event_key === undefined && event.metadata === undefined;

/**
 * The tracker's side of `aggregate: { windowMs }`: which tracked events may be summed, their windows
 * (the {@link createSumWindows} windows), and each aggregate put in the spool in place of its
 * members before it is sent, so a crash and a replay send the same sum under the same key.
 */
export class Aggregation {
  readonly #options: AggregationOptions;
  readonly #windows: SumWindows<HandedEntry>;
  /**
   * Keys of events tracked here that may be summed (no metadata, no caller key), until handed, each
   * with the longest its window may still stay open (`undefined`: `windowMs`).
   */
  readonly #summable = new Map<string, number | undefined>();
  /** Members waiting in a window, each counted as work under way. */
  #held = 0;
  /** Flushes under way: windows close as soon as their events are handed. */
  #flushes = 0;

  constructor(options: AggregationOptions) {
    this.#options = options;
    this.#windows = createSumWindows<HandedEntry>({
      windowMs: options.windowMs,
      clock: options.clock,
      formed: (members, aggregate) => {
        this.#release(members.length);
        if (aggregate) void this.#replace(members, aggregate);
        else options.enqueue(members);
      },
    });
  }

  /**
   * `track` is about to append an event under `eventKey`: remembered when it may be summed
   * (`summable`: no key of the caller's, no metadata; see {@link isSummable}), before the append
   * resolves, since a take may hand the entry first. With `withinMs`, its window closes at most that
   * long after the entry is handed.
   */
  mark(summable: boolean, eventKey: string, withinMs?: number): void {
    if (summable) this.#summable.set(eventKey, withinMs);
  }

  /** The event's append failed, or its entry left the spool: it is no longer to be summed here. */
  forget(eventKey: string): void {
    this.#summable.delete(eventKey);
  }

  /** An entry handed by the spool: put in its window when it may be summed (true), else to be sent as it is. */
  offer(entry: HandedEntry): boolean {
    const key = entry.event.event_key;
    if (!this.#summable.has(key)) return false;
    const withinMs = this.#summable.get(key);
    this.#summable.delete(key);
    // Work under way until its window closes: in workerd, the request that began the window's
    // timer must outlive it (a waitUntil promise waits for the tracker's work; see tracker.ts).
    this.#held++;
    this.#options.work.begin();
    this.#windows.add(entry, withinMs);
    return true;
  }

  /** A take handed a batch: while a flush waits, its windows must not make it wait out `windowMs`. */
  taken(): void {
    if (this.#flushes) this.#windows.formAll();
  }

  /** A flush begins: windows close as soon as their events are handed, until {@link endFlush}. */
  beginFlush(): void {
    this.#flushes++;
  }

  /** A flush begun with {@link beginFlush} is over. */
  endFlush(): void {
    this.#flushes--;
  }

  /** Closes every window now. */
  formAll(): void {
    this.#windows.formAll();
  }

  /** Forgets the windows: their members stay in the spool, unsent. */
  stop(): void {
    this.#windows.stop();
    this.#release(this.#held);
  }

  /** `count` members left their windows: no longer work under way. */
  #release(count: number): void {
    this.#held -= count;
    for (let i = 0; i < count; i++) this.#options.work.end();
  }

  /**
   * Puts the aggregate in the spool in place of its members, before it is sent. A failed replace is
   * retried with the same aggregate (same key): if an attempt did land after all, the service sees
   * that key twice and records it once. A `'conflict'` (a member acknowledged or claimed by another
   * instance meanwhile) wrote nothing: the members still pending are sent one by one, with their own
   * keys; the others were acknowledged elsewhere (or by an earlier attempt that landed, whose
   * aggregate is in the spool and will be sent).
   */
  async #replace(members: HandedEntry[], aggregate: SpooledEvent): Promise<void> {
    const { spool, book, signal, report, clock } = this.#options;
    const ids = members.map((m) => m.id);
    await this.#options.work.run(async () => {
      for (let attempt = 1; ; attempt++) {
        let failure: unknown;
        try {
          book.replaced(members, await spool.replace(ids, aggregate), aggregate);
          this.#options.wake();
          return;
        } catch (error) {
          if (signal.aborted) return; // the members stay in the spool, unsent
          report(error);
          failure = error;
        }
        if (failure instanceof SpoolError && failure.code === 'conflict' && (await this.#unpicked(members))) {
          return;
        }
        try {
          await signal.signal((s) => clock.sleep(trackerBackoff(attempt), s, () => new Error('stopped')));
        } catch {
          return;
        }
      }
    });
  }

  /** After a conflict: sends the members still pending one by one; false when that is not known. */
  async #unpicked(members: HandedEntry[]): Promise<boolean> {
    const { spool, report, enqueue, finish } = this.#options;
    let pending: Set<string>;
    try {
      pending = new Set(await spool.pending(members.map((m) => m.id)));
    } catch (error) {
      report(error); // not knowing which members are left, the replace is tried again
      return false;
    }
    const left: HandedEntry[] = [];
    for (const member of members) {
      if (pending.has(member.id)) left.push(member);
      else finish(member, 'elsewhere');
    }
    enqueue(left);
    return true;
  }
}
