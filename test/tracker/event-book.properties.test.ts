import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BookEntry, EventBook } from '../../src/tracker/event-book.js';
import type { SpooledEvent } from '../../src/tracker/spool.js';
import { METER } from './support.js';

// The book alone, no spool: random sequences of what the tracker tells it (appends, takes, sends,
// retries, acknowledgements, dead letters, replacements by an aggregate, entries sent elsewhere),
// against a tiny model of what the spool holds for this process. After every step:
// queued + inFlight = the weight of what the spool holds, and every counter is the model's.

/** One entry of the modelled spool, as this process sees it. */
interface Held {
  id: string;
  weight: number;
  since: number;
  /** Whether the book knows its id: appended here, or handed (a leftover is not, until handed). */
  known: boolean;
  /** The book's entry, once a step gave it out. */
  entry?: BookEntry | undefined;
  handed: boolean;
  sending: boolean;
}

const OPS = [
  'append',
  'appendHandedFirst',
  'take',
  'takeAgain',
  'send',
  'retry',
  'abort',
  'record',
  'deadLetter',
  'elsewhere',
  'replace',
  'replaceHandedFirst',
  'drained',
  'flush',
  'sendAll',
] as const;
type Op = { op: (typeof OPS)[number]; pick: number; size: number };

const opArb: fc.Arbitrary<Op> = fc.record({
  op: fc.constantFrom(...OPS),
  pick: fc.nat(),
  size: fc.integer({ min: 2, max: 5 }),
});

const event = (key: string, quantity = 1): SpooledEvent => ({ ...METER, quantity, event_key: key });

/** A model spool and the book under test, driven together. */
class Run {
  readonly book = new EventBook();
  /** What the spool holds for this process, in the order a take hands it (leftovers first). */
  readonly held: Held[] = [];
  readonly flushes: { ids: Set<string>; done: boolean }[] = [];
  now = 1_000;
  openedAt = 0;
  next = 1;
  recorded = 0;
  deadLettered = 0;
  retries = 0;
  elsewhere = 0;
  total = 0;

  constructor(leftovers: number) {
    this.openedAt = this.now;
    for (let i = 0; i < leftovers; i++) {
      this.held.push({
        id: `l${i}`,
        weight: 1,
        since: this.now,
        known: false,
        handed: false,
        sending: false,
      });
    }
    this.total = leftovers;
    this.book.leftoversFound(leftovers, this.now);
  }

  unknownLeftovers(): Held[] {
    return this.held.filter((h) => !h.known);
  }

  /** Known entries matching `test`, the `pick`-th of them (or none). */
  choose(pick: number, test: (h: Held) => boolean): Held | undefined {
    const candidates = this.held.filter((h) => h.known && test(h));
    return candidates.length ? candidates[pick % candidates.length] : undefined;
  }

  remove(held: Held): void {
    this.held.splice(this.held.indexOf(held), 1);
    for (const flush of this.flushes) flush.ids.delete(held.id);
  }

  /** A take hands `held` (known, or the next leftover). */
  hand(held: Held, eventOf: SpooledEvent): void {
    const entry = this.book.handed({ id: held.id, event: eventOf }, this.now);
    expect(entry).toBeDefined();
    held.known = true;
    held.entry = entry;
    held.handed = true;
  }

  step({ op, pick, size }: Op): void {
    this.now += 7;
    const { book } = this;
    switch (op) {
      case 'append': {
        const id = `a${this.next++}`;
        this.total++;
        book.appended(id, event(id), this.now);
        this.held.push({ id, weight: 1, since: this.now, known: true, handed: false, sending: false });
        return;
      }
      case 'appendHandedFirst': {
        // A take hands the entry before track sees its append resolve: only once every leftover is
        // handed (a spool hands leftovers first).
        if (this.unknownLeftovers().length) return;
        const id = `a${this.next++}`;
        const trackedAt = this.now - 3;
        this.total++;
        const held: Held = { id, weight: 1, since: trackedAt, known: false, handed: false, sending: false };
        this.held.push(held);
        this.hand(held, event(id));
        book.appended(id, event(id), trackedAt);
        return;
      }
      case 'take': {
        const leftover = this.unknownLeftovers()[0];
        const held = leftover ?? this.choose(pick, (h) => !h.handed);
        if (held) this.hand(held, event(held.id));
        return;
      }
      case 'takeAgain': {
        const held = this.choose(pick, (h) => h.handed);
        if (held) expect(book.handed({ id: held.id, event: event(held.id) }, this.now)).toBeUndefined();
        return;
      }
      case 'send':
      case 'retry':
      case 'abort':
      case 'record':
      case 'deadLetter':
        this.sendStep(op, pick);
        return;
      case 'elsewhere': {
        // Appended here, handed to another instance, acknowledged there.
        const held = this.choose(pick, (h) => !h.handed);
        if (!held) return;
        book.finish(this.entryOf(held), 'elsewhere');
        this.elsewhere += held.weight;
        this.remove(held);
        return;
      }
      case 'replace':
      case 'replaceHandedFirst':
        this.replaceStep(op === 'replaceHandedFirst', pick, size);
        return;
      case 'drained':
        // A take handed fewer than asked: every leftover has been handed by then.
        if (!this.unknownLeftovers().length) book.leftoversHanded();
        return;
      case 'sendAll':
        // A burst: everything held is taken, sent and recorded (flushes waiting can then end).
        for (const held of [...this.held]) {
          if (!held.handed) this.hand(held, event(held.id));
          if (!held.sending) this.book.setSending(this.entryOf(held), true);
          held.sending = true;
          this.sendStep('record', this.held.filter((h) => h.sending).indexOf(held));
        }
        if (!this.unknownLeftovers().length) book.leftoversHanded();
        return;
      case 'flush': {
        const ids = new Set(this.held.filter((h) => h.known).map((h) => h.id));
        const flush = { ids, done: false };
        this.flushes.push(flush);
        void book.finishedAll().then(() => {
          flush.done = true;
        });
        return;
      }
    }
  }

  /** The book's entry for `held`: given out by a take, or (appended, never handed) by `notHanded`. */
  entryOf(held: Held): BookEntry {
    held.entry ??= this.book.notHanded().find((e) => e.id === held.id);
    expect(held.entry).toBeDefined();
    return held.entry!;
  }

  sendStep(op: 'send' | 'retry' | 'abort' | 'record' | 'deadLetter', pick: number): void {
    const { book } = this;
    if (op === 'send') {
      const held = this.choose(pick, (h) => h.handed && !h.sending);
      if (!held) return;
      book.setSending(this.entryOf(held), true);
      held.sending = true;
      return;
    }
    const held = this.choose(pick, (h) => h.sending);
    if (!held) return;
    const entry = this.entryOf(held);
    if (op === 'retry' || op === 'abort') {
      if (op === 'retry') {
        book.retried();
        this.retries++;
      }
      book.setSending(entry, false);
      held.sending = false;
      return;
    }
    book.finish(entry, op === 'record' ? 'recorded' : 'deadLettered');
    if (op === 'record') this.recorded += held.weight;
    else this.deadLettered += held.weight;
    this.remove(held);
  }

  /** Entries handed and waiting (in a window) replaced by one aggregate. */
  replaceStep(handedFirst: boolean, pick: number, size: number): void {
    const candidates = this.held.filter((h) => h.known && h.handed && !h.sending);
    if (candidates.length < 2) return;
    if (handedFirst && this.unknownLeftovers().length) return;
    const members: Held[] = [];
    for (let i = 0; i < Math.min(size, candidates.length); i++) {
      members.push(candidates[(pick + i) % candidates.length]!);
    }
    const id = `g${this.next++}`;
    const weight = members.reduce((sum, m) => sum + m.weight, 0);
    const since = Math.min(...members.map((m) => m.since));
    const quantity = weight;
    const aggregate = event(id, quantity);
    const held: Held = { id, weight, since, known: false, handed: false, sending: false };
    if (handedFirst) {
      // The aggregate is in the spool before `replaced` runs, and a take hands it: unknown then.
      held.weight = 1;
      this.held.push(held);
      this.hand(held, aggregate);
      held.weight = weight;
      held.since = since;
    } else {
      this.held.push(held);
    }
    held.entry = this.book.replaced(
      members.map((m) => this.entryOf(m)),
      id,
      aggregate,
    );
    held.known = true;
    for (const flush of this.flushes) {
      let had = false;
      for (const m of members) had = flush.ids.delete(m.id) || had;
      if (had) flush.ids.add(id);
    }
    for (const m of members) this.held.splice(this.held.indexOf(m), 1);
  }

  /** The invariants, after every step. */
  check(): void {
    const { book } = this;
    const weight = this.held.reduce((sum, h) => sum + h.weight, 0);
    const inFlight = this.held.filter((h) => h.sending).reduce((sum, h) => sum + h.weight, 0);
    // The invariant: what the book counts is what the spool holds for this process.
    expect(book.queued + book.inFlight).toBe(weight);
    expect(book.outstanding).toBe(weight);
    // What maxQueued bounds: the entries known here, leftovers not taken yet left out.
    expect(book.known).toBe(weight - this.unknownLeftovers().length);
    const stats = book.stats(this.now);
    let oldest = Number.POSITIVE_INFINITY;
    for (const h of this.held) oldest = Math.min(oldest, h.since);
    expect(stats).toEqual({
      queued: weight - inFlight,
      inFlight,
      recorded: this.recorded,
      deadLettered: this.deadLettered,
      retries: this.retries,
      oldestQueuedMs: this.held.length ? this.now - oldest : 0,
    });
    // Nothing is lost or counted twice.
    expect(stats.queued + stats.inFlight + stats.recorded + stats.deadLettered + this.elsewhere).toBe(
      this.total,
    );
  }

  /** A flush resolves once every entry it waited on left (an aggregate standing for its members). */
  checkFlushes(): void {
    for (const flush of this.flushes) expect(flush.done).toBe(flush.ids.size === 0);
  }
}

describe('EventBook: queued + inFlight = what the spool holds for this process', () => {
  it('property: after any sequence of steps, the counters are the model’s', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 20 }), fc.array(opArb, { maxLength: 120 }), async (leftovers, ops) => {
        const run = new Run(leftovers);
        run.check();
        for (const op of ops) {
          run.step(op);
          run.check();
          await Promise.resolve();
          await Promise.resolve();
          run.checkFlushes();
        }
      }),
      { numRuns: 400 },
    );
  });

  it('leftovers are counted before they are taken, and handing them moves them, not adds them', () => {
    const book = new EventBook();
    book.leftoversFound(3, 100);
    expect(book.stats(150)).toMatchObject({ queued: 3, inFlight: 0, oldestQueuedMs: 50 });
    const entry = book.handed({ id: '1', event: event('left') }, 160)!;
    expect(book.queued).toBe(3);
    book.setSending(entry, true);
    expect(book.stats(170)).toMatchObject({ queued: 2, inFlight: 1 });
    book.finish(entry, 'recorded');
    expect(book.stats(170)).toMatchObject({ queued: 2, inFlight: 0, recorded: 1 });
    book.leftoversHanded();
    expect(book.stats(170)).toMatchObject({ queued: 0, oldestQueuedMs: 0 });
  });

  it('an entry finished twice, or a send of one already gone, changes nothing', () => {
    const book = new EventBook();
    book.appended('1', event('k'), 0);
    const entry = book.handed({ id: '1', event: event('k') }, 1)!;
    book.finish(entry, 'recorded');
    book.finish(entry, 'deadLettered');
    book.setSending(entry, true);
    expect(book.stats(2)).toEqual({
      queued: 0,
      inFlight: 0,
      recorded: 1,
      deadLettered: 0,
      retries: 0,
      oldestQueuedMs: 0,
    });
  });
});
