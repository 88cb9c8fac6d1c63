/**
 * The {@link Spool} contract, run against every spool so `memorySpool()`, `fileSpool(dir)` and
 * `redisSpool(client)` cannot drift apart. Use it from a `*.test.ts` file:
 *
 * ```ts
 * spoolContract('memorySpool', () => memorySpool());
 * spoolContract('fileSpool', (place) => fileSpool(join(root, place)));
 * spoolContract('redisSpool', (place) => redisSpool(client, { stream: place }));
 * ```
 *
 * `makeSpool(place)` returns a spool that is NOT opened yet (the suite calls `open()`). `place` is a
 * fresh name per test (letters, digits and `-`); calling `makeSpool` again with the same `place`
 * must give a spool on the same storage, as the next run of the process would open it: that is how
 * the durable tests find a previous run's leftovers. A memory spool may ignore `place` (its reopen
 * test is skipped: `durable` is false). Entry ids must be stable across a reopen (a leftover keeps
 * its id). The suite closes every spool it made, ignoring errors.
 */
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { InvalidRequestError, SpoolError } from '../../src/core/errors/index.js';
import { createUsageTracker } from '../../src/index.js';
import { deadLetters, keepsDeadLetters } from '../../src/tracker/dead-letters.js';
import type { DeadLetterEntry, Spool, SpoolEntry, SpooledEvent } from '../../src/tracker/spool.js';
import { randomUUID } from '../../src/util/uuid.js';
import { clientFor, instantClock, startMock } from '../helpers.js';
import { poisonProxy, withTrackerClock } from './support.js';

/** A valid event for the demo seed, with its key fixed; `n` makes each one distinct. */
export function spooledEvent(n: number, extra: Partial<SpooledEvent> = {}): SpooledEvent {
  return {
    account_ref_id: 'acct_active',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    quantity: n + 1,
    event_key: `key-${n}-${randomUUID()}`,
    ...extra,
  };
}

const keysOf = (entries: readonly SpoolEntry[]) => entries.map((e) => e.event.event_key);
const sorted = (ids: readonly string[]) => [...ids].sort();

/** Takes until the spool hands nothing more right now (bounded, so a broken spool cannot hang the suite). */
async function takeAll(spool: Spool, max = 1000): Promise<SpoolEntry[]> {
  const out: SpoolEntry[] = [];
  for (let round = 0; round < 100; round++) {
    const batch = await spool.take(max);
    if (!batch.length) return out;
    out.push(...batch);
  }
  throw new Error('take kept handing entries after 100 rounds');
}

/** The rejection of `call` (a test fails when it resolves). */
async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('resolved, where a rejection was expected');
}

/** Every step a spool has but open and close, each called as a user would (ids that may not exist). */
function steps(spool: Spool): [string, () => Promise<unknown>][] {
  const some = ['1', '1-1'];
  return [
    ['append', () => spool.append([spooledEvent(0)])],
    ['take', () => spool.take(1)],
    ['ack', () => spool.ack(some)],
    ['replace', () => spool.replace(some, spooledEvent(1))],
    ['pending', () => spool.pending(some)],
    ['size', () => spool.size?.() ?? Promise.reject(new SpoolError('closed', 'no size'))],
    ...(keepsDeadLetters(spool)
      ? ([
          ['deadLetter', () => spool.deadLetter([letterOf('1')])],
          ['listDeadLetters', () => spool.listDeadLetters()],
          ['replayDeadLetters', () => spool.replayDeadLetters('all')],
          ['dropDeadLetters', () => spool.dropDeadLetters('all')],
        ] as [string, () => Promise<unknown>][])
      : []),
  ];
}

/** What a tracker hands `deadLetter` for the entry `id` (a 400's reason). */
function letterOf(id: string, attempts = 1): DeadLetterEntry {
  return {
    id,
    reason: {
      type: 'error',
      name: 'BadRequestError',
      message: 'unknown meter',
      status: 400,
      body: { error: 'x' },
    },
    attempts,
    firstAttemptAt: '2026-01-02T03:04:05.000Z',
    deadLetteredAt: '2026-01-02T03:04:06.000Z',
  };
}

/** Each step of `spool` rejects with SpoolError `'closed'`. */
async function expectEveryStepClosed(spool: Spool): Promise<void> {
  for (const [name, call] of steps(spool)) {
    const error = await rejection(call);
    expect(error, name).toBeInstanceOf(SpoolError);
    expect((error as SpoolError).code, name).toBe('closed');
  }
}

/** Settles with `promise`, or rejects after `ms` (a flush that never settles fails instead of hanging). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** `spool` with its `append` replaced (a class's methods kept bound to it). */
function withAppend(spool: Spool, append: Spool['append']): Spool {
  return new Proxy(spool, {
    get(target, key) {
      if (key === 'append') return append;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Runs the {@link Spool} contract against the spools `makeSpool` makes (see the module comment). */
export function spoolContract(name: string, makeSpool: (place: string) => Spool | Promise<Spool>): void {
  describe(`${name}: the Spool contract`, () => {
    const made: Spool[] = [];
    let place = '';

    /** A spool at this test's place, opened. */
    async function open(): Promise<Spool> {
      const spool = await makeSpool(place);
      made.push(spool);
      await spool.open();
      return spool;
    }

    afterEach(async () => {
      for (const spool of made.splice(0)) await spool.close().catch(() => {});
      place = '';
    });

    const test = (title: string, body: (ctx: TestContext) => Promise<void>) =>
      it(title, async (ctx) => {
        place = `spool-${randomUUID().slice(0, 8)}`;
        await body(ctx);
      });

    test('says whether it is durable; a fresh spool hands nothing', async () => {
      const spool = await open();
      expect(typeof spool.durable).toBe('boolean');
      expect(await spool.take(10)).toEqual([]);
      expect(await spool.pending([])).toEqual([]);
    });

    test('append resolves with one distinct string id per event, in order; take hands them in append order, events intact', async () => {
      const spool = await open();
      const events = [
        spooledEvent(0),
        spooledEvent(1, { metadata: { region: 'eu', nested: { n: [1, 2] }, text: 'é ✓' } }),
        spooledEvent(2),
      ];
      const ids = await spool.append(events);
      expect(ids).toHaveLength(3);
      for (const id of ids) expect(typeof id).toBe('string');
      expect(new Set(ids).size).toBe(3);
      const more = await spool.append([spooledEvent(3)]);
      expect(ids).not.toContain(more[0]);

      const taken = await spool.take(10);
      expect(taken.map((e) => e.id)).toEqual([...ids, ...more]);
      expect(taken.slice(0, 3).map((e) => e.event)).toEqual(events);
    });

    test('take(max) hands at most max entries, the rest on later takes, in order', async () => {
      const spool = await open();
      const ids = await spool.append(Array.from({ length: 7 }, (_, i) => spooledEvent(i)));
      const first = await spool.take(3);
      const second = await spool.take(3);
      const third = await spool.take(3);
      expect(first).toHaveLength(3);
      expect(second).toHaveLength(3);
      expect([...first, ...second, ...third].map((e) => e.id)).toEqual(ids);
      expect(await spool.take(3)).toEqual([]);
    });

    test('take never hands an entry twice in one process, acknowledged or not', async () => {
      const spool = await open();
      const ids = await spool.append(Array.from({ length: 5 }, (_, i) => spooledEvent(i)));
      const taken = await takeAll(spool, 2);
      expect(taken.map((e) => e.id)).toEqual(ids);
      await spool.ack([ids[0] as string]);
      expect(await spool.take(10)).toEqual([]);
      const later = await spool.append([spooledEvent(9)]);
      expect((await spool.take(10)).map((e) => e.id)).toEqual(later);
      expect(await spool.take(10)).toEqual([]);
    });

    test('concurrent appends each get their own ids, and take hands every entry once', async () => {
      const spool = await open();
      const batches = await Promise.all(
        Array.from({ length: 20 }, (_, i) => spool.append([spooledEvent(2 * i), spooledEvent(2 * i + 1)])),
      );
      const ids = batches.flat();
      expect(new Set(ids).size).toBe(40);
      const taken = await takeAll(spool, 7);
      expect(sorted(taken.map((e) => e.id))).toEqual(sorted(ids));
      // Each batch stays in its order.
      const position = new Map(taken.map((e, i) => [e.id, i]));
      for (const [a, b] of batches)
        expect(position.get(a as string)).toBeLessThan(position.get(b as string) as number);
    });

    test('what take hands is what was appended, not the caller’s object changed afterwards', async () => {
      const spool = await open();
      const event = spooledEvent(0, { metadata: { tag: 'before' } });
      await spool.append([event]);
      event.quantity = 999;
      (event.metadata as Record<string, unknown>).tag = 'after';
      const [entry] = await spool.take(1);
      expect(entry?.event.quantity).toBe(1);
      expect(entry?.event.metadata).toEqual({ tag: 'before' });
    });

    test('pending lists the ids not acknowledged yet, handed or not; ack is for good', async () => {
      const spool = await open();
      const ids = await spool.append(Array.from({ length: 4 }, (_, i) => spooledEvent(i)));
      const [a, b, c, d] = ids as [string, string, string, string];
      expect(sorted(await spool.pending(ids))).toEqual(sorted(ids));
      await spool.take(2); // a, b handed, not acknowledged: still pending
      expect(sorted(await spool.pending(ids))).toEqual(sorted(ids));
      await spool.ack([a, c]);
      expect(sorted(await spool.pending(ids))).toEqual(sorted([b, d]));
      expect(await spool.pending([a])).toEqual([]);
      // c was acknowledged before it was handed: never handed now.
      expect((await takeAll(spool)).map((e) => e.id)).toEqual([d]);
      await spool.ack([b, d]);
      expect(await spool.pending(ids)).toEqual([]);
    });

    test('replace acknowledges the members and appends the aggregate in one step; take hands the aggregate', async () => {
      const spool = await open();
      const ids = await spool.append(Array.from({ length: 4 }, (_, i) => spooledEvent(i)));
      const taken = await spool.take(3);
      const members = taken.map((e) => e.id);
      const aggregate = spooledEvent(100, { quantity: 6 });
      const aggregateId = await spool.replace(members, aggregate);
      expect(typeof aggregateId).toBe('string');
      expect(ids).not.toContain(aggregateId);
      expect(sorted(await spool.pending([...ids, aggregateId]))).toEqual(
        sorted([ids[3] as string, aggregateId]),
      );
      const rest = await takeAll(spool);
      expect(rest.map((e) => e.id)).toEqual([ids[3], aggregateId]);
      expect(rest[1]?.event).toEqual(aggregate);
      await spool.ack([aggregateId]);
      expect(await spool.pending([aggregateId])).toEqual([]);
    });

    test('1000 entries through take, ack and pending: each handed once, in order, none left', async () => {
      const spool = await open();
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        ids.push(...(await spool.append(Array.from({ length: 100 }, (_, j) => spooledEvent(i * 100 + j)))));
      }
      const taken = await takeAll(spool, 64);
      expect(taken.map((e) => e.id)).toEqual(ids);
      expect(taken.map((e) => e.event.quantity)).toEqual(ids.map((_, i) => i + 1));
      await spool.ack(ids);
      expect(await spool.pending(ids)).toEqual([]);
    });

    test('close resolves; a durable spool reopened hands what was left first, keys intact, then new entries', async () => {
      const first = await open();
      const events = Array.from({ length: 6 }, (_, i) => spooledEvent(i));
      const ids = await first.append(events);
      const [a, b, c] = ids as [string, string, string];
      await first.take(4);
      await first.ack([a]); // recorded
      const aggregate = spooledEvent(50, { quantity: 5 });
      const aggregateId = await first.replace([b, c], aggregate); // b + c became one aggregate, not sent yet
      // d was handed and not acknowledged (in flight when the process died); e and f never handed.
      await first.close();
      made.splice(made.indexOf(first), 1);
      if (!first.durable) {
        // Not durable: a spool made anew in its place starts empty (what was left died with the first).
        const again = await open();
        expect(await again.take(10)).toEqual([]);
        return;
      }

      const second = await open();
      const fresh = spooledEvent(60);
      await second.append([fresh]); // appended after the reopen: handed after every leftover
      const handed = await takeAll(second, 2);
      const leftovers = [events[3], events[4], events[5], aggregate] as SpooledEvent[];
      expect(handed).toHaveLength(5);
      expect(sorted(keysOf(handed.slice(0, 4)))).toEqual(sorted(leftovers.map((e) => e.event_key)));
      for (const entry of handed.slice(0, 4)) {
        expect(entry.event).toEqual(leftovers.find((e) => e.event_key === entry.event.event_key));
      }
      expect(handed[4]?.event).toEqual(fresh);
      // Ids are stable across runs: the leftovers keep theirs, and what was acknowledged stays so.
      const handedIds = handed.map((entry) => entry.id);
      expect(sorted(handedIds.slice(0, 4))).toEqual(sorted([...ids.slice(3), aggregateId]));
      expect(sorted(await second.pending([...ids, aggregateId, handedIds[4] as string]))).toEqual(
        sorted(handedIds),
      );
      await second.ack(handedIds);
      await second.close();
      made.splice(made.indexOf(second), 1);

      const third = await open();
      expect(await third.take(10)).toEqual([]);
    });

    test('size (optional in the interface, given by every spool of the SDK): 0 when fresh; reopened, how many entries the previous run left', async () => {
      const first = await open();
      expect(await first.size?.()).toBe(0);
      const ids = await first.append([0, 1, 2, 3].map((i) => spooledEvent(i)));
      const [a, b, c] = ids as [string, string, string];
      await first.take(2);
      await first.ack([a]);
      await first.replace([b, c], spooledEvent(9, { quantity: 5 }));
      await first.close();
      made.splice(made.indexOf(first), 1);
      if (!first.durable) return;
      // Left: the fourth event and the aggregate.
      const second = await open();
      expect(await second.size?.()).toBe(2);
      expect(await takeAll(second)).toHaveLength(2);
    });

    test('misuse: every step before open rejects SpoolError closed, and stores nothing', async () => {
      const spool = await makeSpool(place);
      made.push(spool);
      await expectEveryStepClosed(spool);
      await spool.open();
      expect(await spool.take(10)).toEqual([]);
    });

    test('misuse: open while open rejects SpoolError locked; the spool stays open and usable', async () => {
      const spool = await open();
      const again = await rejection(() => spool.open());
      expect(again).toBeInstanceOf(SpoolError);
      expect((again as SpoolError).code).toBe('locked');
      const [id] = await spool.append([spooledEvent(0)]);
      expect((await spool.take(1)).map((entry) => entry.id)).toEqual([id]);
    });

    test('misuse: every step after close rejects SpoolError closed', async () => {
      const spool = await open();
      await spool.append([spooledEvent(0)]);
      await spool.close();
      await expectEveryStepClosed(spool);
    });

    test('dead letters: a durable spool keeps them (deadLetter moves entries out, list shows them with their reason, attempts and times); a memory spool keeps none', async () => {
      const spool = await open();
      if (!keepsDeadLetters(spool)) {
        // The memory spool: its dead letters are told to onDeadLetter only, and deadLetters(spool) says so.
        expect(() => deadLetters(spool)).toThrow(InvalidRequestError);
        return;
      }
      expect(spool.durable).toBe(true);
      const events = [0, 1, 2, 3].map((i) => spooledEvent(i));
      const [a, b, c, d] = (await spool.append(events)) as [string, string, string, string];
      expect(await takeAll(spool)).toHaveLength(4);
      await spool.ack([c]);
      // c was acknowledged (by another instance, say): it is skipped; ids no entry can have are too.
      await spool.deadLetter([letterOf(a, 3), letterOf(b), letterOf(c), letterOf('not-an-id')]);
      expect(await spool.pending([a, b, c, d])).toEqual([d]);
      const letters = await deadLetters(spool).list();
      expect(letters.map((letter) => letter.event)).toEqual([events[0], events[1]]);
      expect(letters[0]).toMatchObject({
        reason: letterOf(a).reason,
        attempts: 3,
        firstAttemptAt: '2026-01-02T03:04:05.000Z',
        deadLetteredAt: '2026-01-02T03:04:06.000Z',
      });
      for (const letter of letters) expect(typeof letter.id).toBe('string');
      expect(new Set(letters.map((letter) => letter.id)).size).toBe(2);
      expect(await deadLetters(spool).list({ max: 1 })).toEqual(letters.slice(0, 1));
      // Never handed again: neither here nor to the next run.
      await spool.close();
      made.splice(made.indexOf(spool), 1);
      const again = await open();
      expect(keysOf(await takeAll(again))).toEqual([events[3]?.event_key]);
      expect(await deadLetters(again).list()).toEqual(letters);
    });

    test('dead letters: replay moves letters back into the spool under their original event_key, once; drop deletes them; unknown ids are skipped', async () => {
      const spool = await open();
      if (!keepsDeadLetters(spool)) return;
      const events = [0, 1, 2].map((i) => spooledEvent(i, { metadata: { text: 'é ✓', n: [1, 2] } }));
      const ids = await spool.append(events);
      await takeAll(spool);
      await spool.deadLetter(ids.map((id) => letterOf(id)));
      const letters = deadLetters(spool);
      const [x, y, z] = (await letters.list()).map((letter) => letter.id) as [string, string, string];

      expect(await letters.replay([y, 'no-such-letter', '999999'])).toEqual([y]);
      expect(await letters.replay([y])).toEqual([]); // replayed already: nothing twice
      const back = await takeAll(spool);
      expect(back.map((entry) => entry.event)).toEqual([events[1]]);
      expect(ids).not.toContain(back[0]?.id);
      expect((await letters.list()).map((letter) => letter.id)).toEqual([x, z]);

      expect(await letters.drop([x])).toEqual([x]);
      expect((await letters.list()).map((letter) => letter.event)).toEqual([events[2]]);
      expect(await letters.replay('all')).toEqual([z]);
      const zBack = await takeAll(spool);
      expect(keysOf(zBack)).toEqual([events[2]?.event_key]);
      await spool.ack(zBack.map((entry) => entry.id)); // recorded
      expect(await letters.list()).toEqual([]);

      await spool.deadLetter([letterOf(back[0]!.id)]);
      expect(await letters.drop('all')).toHaveLength(1);
      expect(await letters.list()).toEqual([]);
      expect(await letters.replay('all')).toEqual([]);
      // Dropped for good, and the replayed entry recorded: nothing left for the next run.
      await spool.close();
      made.splice(made.indexOf(spool), 1);
      const next = await open();
      expect(await takeAll(next)).toEqual([]);
    });

    test('dead letters: deadLetters(spool) checks what it is given, before any I/O', async () => {
      const spool = await open();
      if (!keepsDeadLetters(spool)) return;
      const letters = deadLetters(spool);
      for (const bad of ['some', [''], [1], undefined] as unknown as string[][]) {
        const error = await rejection(async () => letters.replay(bad));
        expect(error, String(bad)).toBeInstanceOf(InvalidRequestError);
        expect((error as InvalidRequestError).message).toContain('ids');
        expect(await rejection(async () => letters.drop(bad))).toBeInstanceOf(InvalidRequestError);
      }
      expect(await rejection(async () => letters.list({ max: 0 }))).toBeInstanceOf(InvalidRequestError);
    });

    test('a tracker on it: an event the service refuses retryably on its own backs off alone, the others are recorded, and after maxAttempts it is a dead letter (in the dead-letter store where the spool keeps one); flush settles', async () => {
      const server = await startMock();
      const proxy = await poisonProxy(new URL(server.baseUrl).origin);
      const spool = await makeSpool(place);
      made.push(spool);
      const letters: string[] = [];
      const billing = clientFor(server, { baseUrl: `${proxy.url}/api/`, maxRetries: 0 });
      const tracker = createUsageTracker(
        billing,
        withTrackerClock(
          { spool, maxAttempts: 3, onDeadLetter: (event) => void letters.push(event.event_key) },
          instantClock(),
        ),
      );
      try {
        const poison = spooledEvent(0);
        proxy.poison(poison.event_key, 503);
        await tracker.track(poison);
        const healthy = [1, 2, 3, 4, 5, 6].map((i) => spooledEvent(i));
        for (const event of healthy) await tracker.track(event);
        await within(tracker.flush(), 15_000);
        for (const event of healthy) expect(server.store.usageEvent(event.event_key)).toBeDefined();
        expect(proxy.refused.get(poison.event_key)).toBe(3);
        expect(letters).toEqual([poison.event_key]);
        expect(tracker.stats()).toMatchObject({ recorded: 6, deadLettered: 1, queued: 0, inFlight: 0 });
        if (keepsDeadLetters(spool)) {
          const kept = await spool.listDeadLetters();
          expect(kept.map((letter) => letter.event.event_key)).toEqual([poison.event_key]);
          expect(kept[0]).toMatchObject({ attempts: 3, reason: { type: 'error', status: 503 } });
        }
        expect(await tracker.close()).toEqual({ unsent: 0 });
      } finally {
        await tracker.close({ timeoutMs: 0 }).catch(() => {});
        await proxy.close();
        await server.close();
      }
    });

    test('a tracker on it: an append whose answer is lost rejects with outcome unknown and the eventKey; tracked again under that key, it is recorded once', async () => {
      const server = await startMock();
      const spool = await makeSpool(place);
      made.push(spool);
      let lose = 1;
      const losing = withAppend(spool, async (events) => {
        const ids = await spool.append(events);
        if (lose-- > 0) throw new SpoolError('unavailable', 'the reply was lost');
        return ids;
      });
      const tracker = createUsageTracker(
        clientFor(server, { maxRetries: 0 }),
        withTrackerClock({ spool: losing }, instantClock()),
      );
      try {
        const { event_key: _, ...event } = spooledEvent(0, { quantity: 7 });
        const error = await rejection(() => tracker.track(event));
        expect(error).toBeInstanceOf(SpoolError);
        expect(error).toMatchObject({ code: 'unavailable', outcome: 'unknown' });
        const eventKey = (error as SpoolError).eventKey as string;
        expect(typeof eventKey).toBe('string');
        await tracker.track({ ...event, event_key: eventKey });
        await within(tracker.flush(), 15_000);
        // Its entry was written after all, and is sent as well as the retry's, under the same key: counted once.
        expect(server.store.usageEvents.filter((e) => e.event_key === eventKey)).toHaveLength(1);
        expect(server.store.usageEvent(eventKey)?.quantity).toBe(7);
        expect(await tracker.close()).toEqual({ unsent: 0 });
      } finally {
        await tracker.close({ timeoutMs: 0 }).catch(() => {});
        await server.close();
      }
    });

    test('misuse: close before open, twice, and twice at once resolve, doing nothing more', async () => {
      const spool = await makeSpool(place);
      made.push(spool);
      await expect(spool.close()).resolves.toBeUndefined();
      await spool.open(); // a close before open did not close it for good
      await spool.append([spooledEvent(0)]);
      await expect(Promise.all([spool.close(), spool.close()])).resolves.toEqual([undefined, undefined]);
      await expect(spool.close()).resolves.toBeUndefined();
      await expectEveryStepClosed(spool);
    });
  });
}
