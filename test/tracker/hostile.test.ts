// The tracker under hostile answers and misuse (issue 47 §2): a transaction option that is none, an
// append whose outcome is unknown, a long Retry-After, a wall clock that jumps.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpoolError } from '../../src/core/errors/index.js';
import {
  createUsageTracker,
  InvalidRequestError,
  memorySpool,
  type Spool,
  type UsageTracker,
  type UsageTrackerOptions,
} from '../../src/index.js';
import { TRACKER_RETRY_AFTER_CAP_MS } from '../../src/tracker/backoff.js';
import { DEFAULT_MAX_ATTEMPTS } from '../../src/tracker/options.js';
import { hasTestClock, realClock } from '../../src/util/clock.js';
import { caught, clientFor, instantClock, until, useMockServer } from '../helpers.js';
import { METER, manualClock, poisonProxy, spySpool, withTrackerClock } from './support.js';

const mock = useMockServer();

const open: UsageTracker[] = [];
afterEach(async () => {
  for (const tracker of open.splice(0)) await tracker.close({ timeoutMs: 0 }).catch(() => {});
});

function tracker(options: UsageTrackerOptions = {}, billing = clientFor(mock.server, { maxRetries: 0 })) {
  const timed = hasTestClock(options) ? options : withTrackerClock(options, instantClock());
  const made = createUsageTracker(billing, timed);
  open.push(made);
  return made;
}

/** A memory spool that also writes "through a transaction": one with a `query` method, as a driver's client has. */
function transactionalSpool(): Spool & { calls: { append: number; appendIn: number } } {
  const spool = spySpool();
  return Object.assign(spool, {
    appendIn: async (transaction: unknown, events: Parameters<Spool['append']>[0]) => {
      if (typeof (transaction as { query?: unknown } | null)?.query !== 'function') {
        throw new InvalidRequestError('fakeSpool.appendIn', [
          { field: 'transaction', message: 'must be a client inside BEGIN' },
        ]);
      }
      (spool.calls as unknown as { appendIn: number }).appendIn++;
      return events.map((_, i) => `tx-${i}`);
    },
    calls: Object.assign(spool.calls, { appendIn: 0 }),
  });
}

describe('track(event, { transaction }): present but no transaction is refused, before anything is stored', () => {
  it.each([
    ['null', null],
    ['{}', {}],
    ['0', 0],
    ['false', false],
    ['a string', 'tx'],
  ])(
    '%s: InvalidRequestError naming options.transaction, on a spool with or without appendIn',
    async (_, bad) => {
      for (const spool of [spySpool(), transactionalSpool()]) {
        const made = tracker({ spool });
        const error = await caught(() => made.track({ ...METER, quantity: 1 }, { transaction: bad }));
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual(['options.transaction']);
        expect(spool.calls.append).toBe(0);
        expect(made.stats().queued).toBe(0);
      }
    },
  );

  it('a real transaction still writes through it; no option at all writes outside', async () => {
    const spool = transactionalSpool();
    const made = tracker({ spool });
    await made.track({ ...METER, quantity: 1 }, { transaction: { query: async () => ({ rows: [] }) } });
    expect(spool.calls.appendIn).toBe(1);
    await made.track({ ...METER, quantity: 1 });
    await made.track({ ...METER, quantity: 1 }, { transaction: undefined });
    expect(spool.calls.append).toBe(2);
    expect(spool.calls.appendIn).toBe(1);
    // Delivered before the test ends: one still in flight would land in a later test's usage total.
    await made.flush();
  });

  it('property: any value given as transaction that the spool cannot write through is refused naming options.transaction, nothing stored', async () => {
    const spool = transactionalSpool();
    const made = tracker({ spool });
    await fc.assert(
      fc.asyncProperty(
        fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withBigInt: true }),
        async (bad) => {
          fc.pre(bad !== undefined);
          const error = await caught(() => made.track({ ...METER, quantity: 1 }, { transaction: bad }));
          expect(error).toBeInstanceOf(InvalidRequestError);
          expect((error as InvalidRequestError).issues.map((i) => i.field)).toContain('options.transaction');
          expect(spool.calls.append).toBe(0);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('an append whose outcome is unknown says so, with the event key', () => {
  /** A memory spool whose appends store the events, then fail as a reply lost would (`error()`). */
  function lateSpool(error: () => unknown, times = 1) {
    const inner = memorySpool();
    let left = times;
    return {
      ...inner,
      append: async (events: Parameters<Spool['append']>[0]) => {
        const ids = await inner.append(events);
        if (left-- > 0) throw error();
        return ids;
      },
    };
  }
  const total = () =>
    mock.server.store.usageTotal(METER.account_ref_id, METER.product_code, METER.meter_code);

  it.each([
    [
      'unavailable (Redis answered after timeoutMs, a commit whose reply was lost)',
      () => new SpoolError('unavailable', 'redisSpool.append: timed out'),
      'unavailable',
    ],
    ['io (a write whose sync failed)', () => new SpoolError('io', 'fileSpool: cannot write'), 'io'],
    ['a plain error of a spool of yours', () => new Error('socket hang up'), 'unavailable'],
  ])(
    '%s: SpoolError with outcome unknown and eventKey; a retry under that key is recorded once',
    async (_, error, code) => {
      const made = tracker({ spool: lateSpool(error) });
      const before = total();
      const failed = await caught(() => made.track({ ...METER, quantity: 5 }));
      expect(failed).toBeInstanceOf(SpoolError);
      expect((failed as SpoolError).code).toBe(code);
      expect((failed as SpoolError).outcome).toBe('unknown');
      const eventKey = (failed as SpoolError).eventKey as string;
      expect(eventKey).toMatch(/^[0-9a-f-]{36}$/);
      expect(failed.message).toContain(eventKey);
      // The caller's retry, as the failures guide says: the same event under that key.
      expect(await made.track({ ...METER, quantity: 5, event_key: eventKey })).toEqual({
        event_key: eventKey,
      });
      await made.flush();
      expect(total() - before).toBe(5);
      expect(mock.server.store.usageEvent(eventKey)?.quantity).toBe(5);
    },
  );

  it('a caller key is the one carried; a failure before anything is written carries no outcome', async () => {
    const made = tracker({ spool: lateSpool(() => new SpoolError('unavailable', 'lost'), 1) });
    const failed = await caught(() => made.track({ ...METER, quantity: 1, event_key: 'mine' }));
    expect(failed).toMatchObject({ outcome: 'unknown', eventKey: 'mine' });
    const closed = tracker({ spool: lateSpool(() => new SpoolError('closed', 'not open')) });
    const refused = await caught(() => closed.track({ ...METER, quantity: 1 }));
    expect((refused as SpoolError).code).toBe('closed');
    expect((refused as SpoolError).outcome).toBeUndefined();
    expect(JSON.parse(JSON.stringify(refused))).not.toHaveProperty('eventKey');
  });
});

/** Settles with `promise`, or rejects after `ms`: a flush that never settles fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('one failing event never stops the others', () => {
  it.each([503, 401, 403, 409])(
    'an event refused %s on its own backs off alone: the 40 tracked after it are sent, it is a dead letter after maxAttempts, and flush settles',
    async (status) => {
      const proxy = await poisonProxy(new URL(mock.server.baseUrl).origin);
      try {
        const letters: [string, unknown][] = [];
        const errors: unknown[] = [];
        const billing = clientFor(mock.server, { baseUrl: `${proxy.url}/api/`, maxRetries: 0 });
        const made = tracker(
          {
            onDeadLetter: (event, reason) => void letters.push([event.event_key, reason]),
            onError: (error) => void errors.push(error),
          },
          billing,
        );
        proxy.poison('poison', status);
        await made.track({ ...METER, quantity: 1, event_key: 'poison' });
        const keys: string[] = [];
        for (let i = 0; i < 40; i++) keys.push((await made.track({ ...METER, quantity: 1 })).event_key);
        await within(made.flush(), 15_000);
        for (const key of keys) expect(mock.server.store.usageEvent(key), key).toBeDefined();
        expect(proxy.refused.get('poison')).toBe(DEFAULT_MAX_ATTEMPTS);
        expect(letters).toHaveLength(1);
        expect(letters[0]?.[0]).toBe('poison');
        expect(letters[0]?.[1]).toMatchObject({ type: 'error', error: { status } });
        expect(errors).toHaveLength(DEFAULT_MAX_ATTEMPTS - 1);
        expect(made.stats()).toMatchObject({ recorded: 40, deadLettered: 1, queued: 0, inFlight: 0 });
      } finally {
        await proxy.close();
      }
    },
  );

  it('each failing event waits out a backoff of its own (on the clock), the others are not held up meanwhile', async () => {
    const proxy = await poisonProxy(new URL(mock.server.baseUrl).origin);
    try {
      const clock = manualClock();
      const billing = clientFor(mock.server, { baseUrl: `${proxy.url}/api/`, maxRetries: 0 });
      const made = tracker(withTrackerClock({ maxAttempts: 3, concurrency: 2 }, clock), billing);
      proxy.poison('poison', 500);
      await made.track({ ...METER, quantity: 1, event_key: 'poison' });
      for (let i = 0; i < 20; i++) await made.track({ ...METER, quantity: 1, event_key: `ok-${i}` });
      const flushed = made.flush();
      // The others are all sent while the failing one waits: no time passes on the clock.
      await until(() => made.stats().recorded === 20);
      expect(proxy.refused.get('poison')).toBe(1);
      expect(clock.sleeping()).toBe(1);
      expect(made.stats()).toMatchObject({ queued: 1, deadLettered: 0 });
      clock.advance(1_000);
      await until(() => proxy.refused.get('poison') === 2 && clock.sleeping() === 1);
      clock.advance(2_000);
      await within(flushed, 2_000);
      expect(proxy.refused.get('poison')).toBe(3);
      expect(made.stats()).toMatchObject({ recorded: 20, deadLettered: 1, queued: 0 });
    } finally {
      await proxy.close();
    }
  });

  it('maxAttempts is checked when the tracker is made', () => {
    for (const bad of [0, 1.5, -1, '3', Number.POSITIVE_INFINITY]) {
      expect(() => createUsageTracker(clientFor(mock.server), { maxAttempts: bad as number })).toThrow(
        /options\.maxAttempts/,
      );
    }
  });
});

describe('a long Retry-After is a wait, not a loop', () => {
  it('a 429 asking for 30 days: one wait (an hour at most, on the one sleep), one onError, nothing sent meanwhile', async () => {
    const clock = manualClock();
    const errors: unknown[] = [];
    const made = tracker(
      withTrackerClock({ onError: (error) => void errors.push(error) }, clock),
      clientFor(mock.server, { maxRetries: 0 }, clock),
    );
    mock.server.faults.add({
      path: '/api/usage/events/',
      status: 429,
      headers: { 'retry-after': '2592000' },
    });
    await made.track({ ...METER, quantity: 1 });
    await until(() => clock.sleeping() > 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(clock.waits).toEqual([TRACKER_RETRY_AFTER_CAP_MS]);
    expect(errors).toHaveLength(1);
    clock.advance(2_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toHaveLength(1);
    expect(mock.server.requests.count({ path: '/api/usage/events/' })).toBe(1);
  });

  it("the SDK's one sleep waits 30 days in chunks a timer can hold, never firing early, and stays cancellable", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const thirtyDays = 30 * 24 * 3600 * 1000;
      let done = false;
      const slept = realClock
        .sleep(thirtyDays, undefined, () => new Error('stopped'))
        .then(() => {
          done = true;
        });
      await vi.advanceTimersByTimeAsync(2_000);
      expect(done).toBe(false);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(thirtyDays - 2_001);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await slept;
      expect(done).toBe(true);
      const stop = new AbortController();
      const cancelled = realClock.sleep(thirtyDays, stop.signal, () => new Error('stopped'));
      stop.abort();
      await expect(cancelled).rejects.toThrow('stopped');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('aggregation windows are timed on a monotonic clock', () => {
  it.each([
    ['forward', 3_600_000],
    ['back', -3_600_000],
  ])(
    'after the wall clock steps %s, an event handed to a waitUntil still waits at most 1 s, and a window its full windowMs',
    async (_, stepMs) => {
      const clock = manualClock();
      const made = tracker(withTrackerClock({ aggregate: { windowMs: 60_000 } }, clock));
      const settled: string[] = [];
      await made.track({ ...METER, quantity: 1 });
      await until(() => clock.sleeping() === 1); // its window is open, closing in 60 s
      clock.step(stepMs);
      await made.track(
        { ...METER, quantity: 2 },
        { waitUntil: (p) => void p.then(() => settled.push('sent')) },
      );
      await until(() => clock.waits.length === 2);
      clock.advance(1_000);
      await until(() => settled.length === 1);
      expect(mock.server.requests.count({ path: '/api/usage/events/' })).toBe(1);
      // A new window after the step stays open its whole windowMs.
      await made.track({ ...METER, quantity: 4 });
      await until(() => clock.sleeping() === 1);
      clock.advance(59_000);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(mock.server.requests.count({ path: '/api/usage/events/' })).toBe(1);
      clock.advance(1_000);
      await made.flush();
      expect(mock.server.requests.count({ path: '/api/usage/events/' })).toBe(2);
    },
  );
});
