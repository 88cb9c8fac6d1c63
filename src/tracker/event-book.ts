import type { SpoolEntry, SpooledEvent } from './spool.js';

/** Counters of a usage tracker, in events (an aggregate counts as the events it sums). */
export interface TrackerStats {
  /**
   * Events waiting to be sent: in the spool (what a previous run left included, once the spool says
   * how many), in an aggregation window, or waiting out a backoff.
   */
  queued: number;
  /** Events being sent (their request, and their acknowledgement in the spool, under way). */
  inFlight: number;
  /** Events the service recorded (including replays it answered `idempotent: true`). */
  recorded: number;
  /** Events handed to `onDeadLetter`. */
  deadLettered: number;
  /** Failed sends that will be sent again (each was told to `onError`). */
  retries: number;
  /** Age in ms of the oldest event not yet recorded or dead-lettered; 0 when there is none. */
  oldestQueuedMs: number;
}

/** An entry of the spool that the tracker knows and that is not acknowledged yet. */
export interface BookEntry {
  readonly id: string;
  /**
   * The event, once this process was handed it (the spool's copy). Before, `undefined` unless the
   * tracker needs it (aggregation): a queued event is kept once, by the spool, not twice.
   */
  event: SpooledEvent | undefined;
  /** Events it stands for: 1, or the members of an aggregate. */
  weight: number;
  /**
   * When its (first) event was tracked: ms on the tracker's clock after the book's epoch (its
   * first entry's time). Small, so V8 keeps it in the entry (a small integer) instead of a number
   * object of its own: a queued event costs less heap.
   */
  since: number;
  /** Whether this process was handed it by `take` (else another instance may send it). */
  handed: boolean;
  /** Whether its send (request and acknowledgement) is under way. */
  sending: boolean;
}

/** An entry this process was handed by the spool: its event is known. */
export type HandedEntry = BookEntry & { event: SpooledEvent };

/** How an entry left the book: acknowledged here as recorded or dead-lettered, or by another instance. */
export type Outcome = 'recorded' | 'deadLettered' | 'elsewhere';

interface Waiter {
  remaining: Set<string>;
  resolve: () => void;
}

/**
 * What the spool holds for this process, in events, and what became of the rest. Its invariant:
 * `queued + inFlight` is the weight of the entries the spool holds for this process (those it knows,
 * plus the leftovers of a previous run it was told of and has not been handed yet), whatever
 * sequence of appends, takes, sends, retries, replacements and acknowledgements led there
 * (test/tracker/event-book.properties.test.ts). It does no I/O: the tracker tells it each step.
 */
export class EventBook {
  readonly #entries = new Map<string, BookEntry>();
  #queued = 0;
  #inFlight = 0;
  /** Entries a previous run left, not handed yet: counted, though their ids are not known. */
  #leftovers = 0;
  #leftoversSince = 0;
  #recorded = 0;
  #deadLettered = 0;
  #retries = 0;
  readonly #waiters = new Set<Waiter>();
  /** What entries' `since` count from: the first time the book was told. */
  #epoch: number | undefined;

  /** `time` (the tracker's clock) as an entry's `since`. */
  #since(time: number): number {
    this.#epoch ??= time;
    return time - this.#epoch;
  }

  /** Events waiting to be sent, leftovers not handed yet included. */
  get queued(): number {
    return this.#queued + this.#leftovers;
  }

  /** Events whose send is under way. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Events neither recorded nor dead-lettered: what the spool holds for this process. */
  get outstanding(): number {
    return this.#queued + this.#leftovers + this.#inFlight;
  }

  /**
   * Events of the entries known here (tracked here, or taken): {@link outstanding} but the
   * leftovers not taken yet. What `maxQueued` bounds, so a restart with a large backlog in a
   * durable spool does not hold up new `track` calls.
   */
  get known(): number {
    return this.#queued + this.#inFlight;
  }

  /** The spool held `count` entries for this process when it was opened, at `now`: a previous run's. */
  leftoversFound(count: number, now: number): void {
    this.#leftovers = Math.max(0, Math.floor(count));
    this.#leftoversSince = now;
  }

  /** The spool handed fewer entries than asked: every leftover has been handed. */
  leftoversHanded(): void {
    this.#leftovers = 0;
  }

  /**
   * `track` appended `event` as `id` at `since` (a take may have handed it already, as an entry
   * unknown then). `event` may be left out: the spool holds it, and hands it with the entry.
   */
  appended(id: string, event: SpooledEvent | undefined, since: number): void {
    const known = this.#entries.get(id);
    if (known) known.since = this.#since(since);
    else this.#add({ id, event, weight: 1, since: this.#since(since), handed: false, sending: false });
  }

  /**
   * A take handed `entry` to this process: its book entry, to send, or `undefined` when it was
   * handed already (a spool that hands an entry twice breaks its contract: it is sent once).
   */
  handed(entry: SpoolEntry, now: number): HandedEntry | undefined {
    let known = this.#entries.get(entry.id);
    if (known?.handed) return undefined;
    if (known) known.event ??= entry.event;
    else {
      // Not appended here: a previous run's (leftovers come first), or another instance's.
      const leftover = this.#leftovers > 0;
      if (leftover) this.#leftovers--;
      known = {
        id: entry.id,
        event: entry.event,
        weight: 1,
        since: this.#since(leftover ? this.#leftoversSince : now),
        handed: true,
        sending: false,
      };
      this.#add(known);
    }
    known.handed = true;
    return known as HandedEntry;
  }

  /** The entry's send starts (`true`), or ends without acknowledging it (`false`: it waits again). */
  setSending(entry: BookEntry, sending: boolean): void {
    if (entry.sending === sending || !this.#entries.has(entry.id)) return;
    entry.sending = sending;
    const delta = sending ? entry.weight : -entry.weight;
    this.#inFlight += delta;
    this.#queued -= delta;
  }

  /** A send failed transiently: the entry will be sent again. */
  retried(): void {
    this.#retries++;
  }

  /** The entry left the spool (acknowledged here or elsewhere): counted, and flushes waiting on it woken. */
  finish(entry: BookEntry, as: Outcome): void {
    if (this.#entries.get(entry.id) !== entry) return;
    this.#remove(entry);
    if (as === 'recorded') this.#recorded += entry.weight;
    else if (as === 'deadLettered') this.#deadLettered += entry.weight;
    for (const waiter of this.#waiters) {
      if (waiter.remaining.delete(entry.id) && waiter.remaining.size === 0) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  /**
   * The spool holds `aggregate` as `id` in place of `members`: its entry stands for them from now on
   * (their weight, their oldest time, the flushes that waited on them). A take under way may have
   * handed the aggregate already, as an entry unknown here: that entry takes the members' weight, so
   * no event is counted twice or lost.
   */
  replaced(members: readonly BookEntry[], id: string, aggregate: SpooledEvent): BookEntry {
    const present = members.filter((m) => this.#entries.get(m.id) === m);
    const weight = present.reduce((sum, m) => sum + m.weight, 0);
    const since = Math.min(...present.map((m) => m.since));
    for (const member of present) this.#remove(member);
    let entry = this.#entries.get(id);
    if (entry) {
      this.#remove(entry);
      Object.assign(entry, { event: aggregate, weight, since });
    } else {
      entry = { id, event: aggregate, weight, since, handed: false, sending: false };
    }
    this.#add(entry);
    for (const waiter of this.#waiters) {
      let had = false;
      for (const member of present) had = waiter.remaining.delete(member.id) || had;
      if (had) waiter.remaining.add(id);
    }
    return entry;
  }

  /** Entries appended here that this process was not handed (a shared spool may hand them to another). */
  notHanded(): BookEntry[] {
    return [...this.#entries.values()].filter((e) => !e.handed);
  }

  /** Resolves once every entry known now has left (an aggregate standing for its members), at once if none. */
  finishedAll(): Promise<void> {
    return this.finished(this.#entries.keys());
  }

  /**
   * Resolves once the entries `ids` known now have left (an aggregate standing for its members), at
   * once if none is known: what a `waitUntil` is handed for one event.
   */
  finished(ids: Iterable<string>): Promise<void> {
    const remaining = new Set([...ids].filter((id) => this.#entries.has(id)));
    if (!remaining.size) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.add({ remaining, resolve }));
  }

  /** The counters at `now` (the tracker's clock). */
  stats(now: number): TrackerStats {
    let oldest = this.#leftovers > 0 ? this.#leftoversSince : Number.POSITIVE_INFINITY;
    const epoch = this.#epoch ?? 0;
    for (const entry of this.#entries.values())
      if (entry.since + epoch < oldest) oldest = entry.since + epoch;
    return {
      queued: this.queued,
      inFlight: this.#inFlight,
      recorded: this.#recorded,
      deadLettered: this.#deadLettered,
      retries: this.#retries,
      oldestQueuedMs: Number.isFinite(oldest) ? Math.max(0, now - oldest) : 0,
    };
  }

  #add(entry: BookEntry): void {
    this.#entries.set(entry.id, entry);
    if (entry.sending) this.#inFlight += entry.weight;
    else this.#queued += entry.weight;
  }

  #remove(entry: BookEntry): void {
    this.#entries.delete(entry.id);
    if (entry.sending) this.#inFlight -= entry.weight;
    else this.#queued -= entry.weight;
  }
}
