import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SpoolError } from '../../src/core/errors/index.js';
import {
  createUsageTracker,
  InvalidRequestError,
  isBillingError,
  memorySpool,
  type SpooledEvent,
  type TrackerStats,
  type UsageTracker,
  type UsageTrackerOptions,
} from '../../src/index.js';
import { SERVICE_FAILING_EVENTS } from '../../src/tracker/delivery.js';
import { hasTestClock } from '../../src/util/clock.js';
import { anything } from '../arbitraries.js';
import { caught, clientFor, instantClock, until, useMockServer } from '../helpers.js';
import { METER, manualClock, PREPAID, refusingProxy, spySpool, withTrackerClock } from './support.js';

const mock = useMockServer();
const EVENTS = '/api/usage/events/';

/** Every unhandled rejection while a test runs: the tracker must cause none. */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  // A rejection nobody handled surfaces after a turn of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 10));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

/** Trackers made by a test are closed after it, so none keeps sending into the next test. */
const open: UsageTracker[] = [];
afterEach(async () => {
  for (const tracker of open.splice(0)) await tracker.close({ timeoutMs: 0 }).catch(() => {});
});

/**
 * A tracker on the mock whose client does not retry (the tracker's own retries are under test) and
 * whose backoff waits end at once unless the test gives a clock: no test sits through a real backoff.
 */
function tracker(options: UsageTrackerOptions = {}, billing = clientFor(mock.server, { maxRetries: 0 })) {
  const timed = hasTestClock(options) ? options : withTrackerClock(options, instantClock());
  const made = createUsageTracker(billing, timed);
  open.push(made);
  return made;
}

const meterTotal = () =>
  mock.server.store.usageTotal(METER.account_ref_id, METER.product_code, METER.meter_code);
/** What the demo seed recorded before the test: tests count what they added. */
let seeded = { total: 0, keys: new Set<string>() };
beforeEach(() => {
  seeded = { total: meterTotal(), keys: new Set(mock.server.store.usageEvents.map((e) => e.event_key)) };
});
/** Usage events the test recorded. */
const recordedEvents = () => mock.server.store.usageEvents.filter((e) => !seeded.keys.has(e.event_key));
const recordedKeys = () => new Set(recordedEvents().map((e) => e.event_key));
/** Usage the test added to the meter. */
const total = () => meterTotal() - seeded.total;

/** The invariants `stats()` keeps at every moment, for trackers whose events are all tracked here. */
function expectTrue(stats: TrackerStats, tracked: number, concurrency = 8): void {
  expect(stats.queued + stats.inFlight + stats.recorded + stats.deadLettered).toBe(tracked);
  for (const n of Object.values(stats)) expect(n).toBeGreaterThanOrEqual(0);
  expect(stats.inFlight).toBeLessThanOrEqual(concurrency);
  if (stats.queued + stats.inFlight === 0) expect(stats.oldestQueuedMs).toBe(0);
}

describe('createUsageTracker: options', () => {
  it('are checked when the tracker is made, each bad one named, before anything starts', () => {
    const billing = clientFor(mock.server);
    const cases: [unknown, string][] = [
      [5, 'options'],
      ['fast', 'options'],
      [[], 'options'],
      [{ concurrency: 0 }, 'options.concurrency'],
      [{ concurrency: 1.5 }, 'options.concurrency'],
      [{ concurrency: '8' }, 'options.concurrency'],
      [{ maxQueued: 0 }, 'options.maxQueued'],
      [{ maxQueued: Number.POSITIVE_INFINITY }, 'options.maxQueued'],
      [{ onFull: 'drop' }, 'options.onFull'],
      [{ aggregate: 1000 }, 'options.aggregate'],
      [{ aggregate: {} }, 'options.aggregate.windowMs'],
      [{ aggregate: { windowMs: 0 } }, 'options.aggregate.windowMs'],
      [{ aggregate: { windowMs: 100, max: 5 } }, 'options.aggregate.max'],
      [{ spool: {} }, 'options.spool'],
      [{ spool: { ...memorySpool(), durable: 'no' } }, 'options.spool'],
      [{ onDeadLetter: 'log' }, 'options.onDeadLetter'],
      [{ onError: 1 }, 'options.onError'],
      [{ retries: 3 }, 'options.retries'],
    ];
    for (const [options, field] of cases) {
      let error: unknown;
      try {
        createUsageTracker(billing, options as UsageTrackerOptions);
      } catch (err) {
        error = err;
      }
      expect(error, JSON.stringify(options)).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).issues.map((i) => i.field)).toContain(field);
    }
    expect(() => createUsageTracker({} as never)).toThrow(/billing must be a BillingClient/);
  });

  it('property: any options give a tracker or a typed error, and a bad one never touches the spool', () => {
    const billing = clientFor(mock.server);
    fc.assert(
      fc.property(
        fc.oneof(
          anything,
          fc.record(
            {
              concurrency: fc.oneof(anything, fc.integer({ min: 1, max: 64 })),
              maxQueued: fc.oneof(anything, fc.integer({ min: 1 })),
              onFull: fc.oneof(anything, fc.constantFrom('wait', 'reject')),
              aggregate: fc.oneof(
                anything,
                fc.record({ windowMs: fc.oneof(anything, fc.integer({ min: 1 })) }),
              ),
              onDeadLetter: fc.oneof(
                anything,
                fc.constant(() => {}),
              ),
              onError: fc.oneof(
                anything,
                fc.constant(() => {}),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
        (options) => {
          const spool = spySpool();
          const withSpool = options && typeof options === 'object' && !Array.isArray(options);
          let made: UsageTracker | undefined;
          try {
            made = createUsageTracker(
              billing,
              withSpool ? { ...(options as object), spool } : (options as never),
            );
            open.push(made);
            expect(made.stats()).toEqual({
              queued: 0,
              inFlight: 0,
              recorded: 0,
              deadLettered: 0,
              retries: 0,
              oldestQueuedMs: 0,
            });
          } catch (error) {
            expect(error, String(error)).toBeInstanceOf(InvalidRequestError);
            expect((error as InvalidRequestError).issues.length).toBeGreaterThan(0);
          }
          // A refused tracker never touches the spool; a made one opens it at once, to send what it holds.
          expect(spool.calls.open).toBe(made && withSpool ? 1 : 0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('close options are checked too, as a rejection', async () => {
    const made = tracker();
    const error = await caught(() => made.close({ timeoutMs: -1 }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues[0]?.field).toBe('options.timeoutMs');
    expect(await made.close()).toEqual({ unsent: 0 });
  });
});

describe('track: events are checked as usage.record checks them', () => {
  it('a bad event rejects with InvalidRequestError naming the field; nothing is queued or sent', async () => {
    const spool = spySpool();
    const made = tracker({ spool });
    const cases: [unknown, string][] = [
      [undefined, 'account_ref_id'],
      [{ ...METER }, 'quantity'],
      [{ ...METER, quantity: 0 }, 'quantity'],
      [{ ...METER, quantity: 1.5 }, 'quantity'],
      [{ ...METER, quantity: 1, account_ref_id: '' }, 'account_ref_id'],
      [{ ...METER, quantity: 1, event_key: 7 }, 'event_key'],
      [{ ...METER, quantity: 1, metadata: [1] }, 'metadata'],
      [{ ...METER, quantity: 1, metadata: { n: 1n } }, 'metadata'],
      [{ ...METER, quantity: 1, extra: true }, 'extra'],
      ['acct_active', 'params'],
    ];
    for (const [event, field] of cases) {
      const error = await caught(() => made.track(event as never));
      expect(error, JSON.stringify(String(event))).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).issues.map((i) => i.field)).toContain(field);
    }
    expect(spool.calls.append).toBe(0);
    expect(made.stats().queued).toBe(0);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('a NUL inside a boxed string of the metadata is refused by track itself: the spool never sees it, nothing is counted', async () => {
    const spool = spySpool();
    const made = tracker({ spool });
    const event = { ...METER, quantity: 1, metadata: { note: new String('a\u0000b') } };
    const error = await made.track(event as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).operation).toBe('usageTracker.track');
    expect(spool.calls.append).toBe(0);
    expect(made.stats()).toMatchObject({ queued: 0, inFlight: 0, recorded: 0 });
  });

  it('property: whatever is tracked, a bad event is a typed error and nothing is queued; a good one is recorded', async () => {
    const spool = spySpool();
    const made = tracker({ spool });
    const field = (good: fc.Arbitrary<unknown>) => fc.oneof({ weight: 3, arbitrary: good }, anything);
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          anything,
          fc.record(
            {
              account_ref_id: field(fc.constant(METER.account_ref_id)),
              product_code: field(fc.constant(METER.product_code)),
              meter_code: field(fc.constant(METER.meter_code)),
              quantity: field(fc.integer({ min: 1, max: 1000 })),
              metadata: field(fc.dictionary(fc.string(), fc.jsonValue())),
            },
            { requiredKeys: [] },
          ),
        ),
        async (event) => {
          const appends = spool.calls.append;
          const queuedBefore = made.stats();
          const outcome = await made.track(event as never).then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          );
          if ('error' in outcome) {
            expect(outcome.error, String(outcome.error)).toBeInstanceOf(InvalidRequestError);
            expect(spool.calls.append).toBe(appends);
            const now = made.stats();
            expect(now.queued + now.inFlight + now.recorded).toBe(
              queuedBefore.queued + queuedBefore.inFlight + queuedBefore.recorded,
            );
          } else {
            accepted++;
            expect(outcome.value.event_key).toMatch(/^[0-9a-f-]{36}$/);
          }
        },
      ),
      { numRuns: 150 },
    );
    await made.flush();
    expect(made.stats().recorded + made.stats().deadLettered).toBe(accepted);
    expect(recordedEvents()).toHaveLength(made.stats().recorded);
  });
});

describe('delivery', () => {
  it('records every tracked event once, under the key track returned (yours or a new one), metadata intact', async () => {
    const made = tracker();
    const mine = await made.track({ ...METER, quantity: 3, event_key: 'job-42', metadata: { region: 'eu' } });
    expect(mine.event_key).toBe('job-42');
    const keys = [mine.event_key];
    for (let i = 0; i < 30; i++) keys.push((await made.track({ ...METER, quantity: 1 })).event_key);
    expect(new Set(keys).size).toBe(31);
    await made.flush();
    expect(made.stats()).toMatchObject({ queued: 0, inFlight: 0, recorded: 31, deadLettered: 0, retries: 0 });
    expect(recordedKeys()).toEqual(new Set(keys));
    expect(mock.server.store.usageEvent('job-42')).toMatchObject({ quantity: 3, metadata: { region: 'eu' } });
    expect(total()).toBe(33);
    expect(mock.server.requests.count({ path: EVENTS })).toBe(31);
  });

  it('the same key tracked twice is recorded once', async () => {
    const made = tracker();
    await made.track({ ...METER, quantity: 5, event_key: 'once' });
    await made.track({ ...METER, quantity: 5, event_key: 'once' });
    await made.flush();
    expect(made.stats().recorded).toBe(2); // both answered accepted; the second idempotent
    expect(total()).toBe(5);
  });

  it('sends at most `concurrency` at a time, and uses them all', async () => {
    mock.server.faults.add({ path: EVENTS, delayMs: 30, times: Number.POSITIVE_INFINITY });
    const made = tracker({ concurrency: 3 });
    for (let i = 0; i < 12; i++) await made.track({ ...METER, quantity: 1 });
    let most = 0;
    const done = made.flush().then(() => true);
    while (!(await Promise.race([done, new Promise<false>((r) => setTimeout(() => r(false), 3))]))) {
      const stats = made.stats();
      expectTrue(stats, 12, 3);
      most = Math.max(most, stats.inFlight);
    }
    expect(most).toBe(3);
    expect(total()).toBe(12);
  });

  it('sends what a previous run left in the spool first, with its keys', async () => {
    const spool = memorySpool();
    await spool.open();
    const left: SpooledEvent[] = [1, 2, 3].map((n) => ({ ...METER, quantity: n, event_key: `left-${n}` }));
    await spool.append(left);
    await spool.close();
    const made = tracker({ spool, concurrency: 1 });
    await made.track({ ...METER, quantity: 10, event_key: 'new' });
    await made.flush();
    const sent = mock.server.requests.all({ path: EVENTS }).map((r) => (r.body as SpooledEvent).event_key);
    expect(sent).toEqual(['left-1', 'left-2', 'left-3', 'new']);
    expect(total()).toBe(16);
  });

  it('flush alone opens the spool and sends what a previous run left', async () => {
    const spool = memorySpool();
    await spool.open();
    await spool.append([{ ...METER, quantity: 7, event_key: 'left' }]);
    await spool.close();
    const made = tracker({ spool });
    await made.flush();
    expect(mock.server.store.usageEvent('left')?.quantity).toBe(7);
  });
});

describe('dead letters', () => {
  it('a refusal (accepted: false) and a 404 go to onDeadLetter once, are acknowledged, and block nothing', async () => {
    const letters: [SpooledEvent, unknown][] = [];
    const spool = spySpool();
    const made = tracker({
      spool,
      concurrency: 1,
      onDeadLetter: (event, reason) => void letters.push([event, reason]),
    });
    const refused = await made.track({ ...PREPAID, quantity: 1 });
    const unknown = await made.track({ ...METER, account_ref_id: 'acct_nobody', quantity: 1 });
    const good = await made.track({ ...METER, quantity: 4 });
    await made.flush();
    expect(letters).toHaveLength(2);
    expect(letters[0]?.[0].event_key).toBe(refused.event_key);
    expect(letters[0]?.[1]).toMatchObject({
      type: 'refused',
      result: { accepted: false, error_code: 'invalid_usage_model' },
    });
    expect(letters[1]?.[0].event_key).toBe(unknown.event_key);
    const reason = letters[1]?.[1] as { type: string; error: unknown };
    expect(reason.type).toBe('error');
    expect(isBillingError(reason.error, 'NotFoundError')).toBe(true);
    // Never retried: one request each.
    expect(mock.server.requests.count({ path: EVENTS })).toBe(3);
    expect(made.stats()).toMatchObject({ recorded: 1, deadLettered: 2, retries: 0, queued: 0, inFlight: 0 });
    expect(mock.server.store.usageEvent(good.event_key)?.quantity).toBe(4);
    const acked = spool.calls.log.filter((l) => l.startsWith('ack ')).flatMap((l) => l.slice(4).split(','));
    expect(acked).toHaveLength(3); // the two dead letters and the recorded event, each once
    // Acknowledged: a tracker opening the same spool afterwards has nothing to send.
    await made.close();
    const next = tracker({ spool });
    await next.flush();
    expect(mock.server.requests.count({ path: EVENTS })).toBe(3);
  });

  it('callbacks that throw or reject change no result', async () => {
    const made = tracker({
      onDeadLetter: () => {
        throw new Error('dead letter store down');
      },
      onError: () => {
        throw new Error('logger down');
      },
    });
    const made2 = tracker({ onDeadLetter: () => Promise.reject(new Error('async store down')) });
    mock.server.faults.add({ path: EVENTS, status: 503 });
    await made.track({ ...PREPAID, quantity: 1 });
    await made.track({ ...METER, quantity: 2 });
    await made2.track({ ...PREPAID, quantity: 1 });
    await made.flush();
    await made2.flush();
    expect(made.stats()).toMatchObject({ recorded: 1, deadLettered: 1, queued: 0 });
    expect(made2.stats()).toMatchObject({ deadLettered: 1, queued: 0 });
    expect(total()).toBe(2);
  });

  it('an async onDeadLetter is awaited before the event is acknowledged', async () => {
    const spool = spySpool();
    let release: () => void = () => {};
    const stored = new Promise<void>((r) => {
      release = r;
    });
    let handed = false;
    const made = tracker({
      spool,
      onDeadLetter: () => {
        handed = true;
        return stored;
      },
    });
    await made.track({ ...PREPAID, quantity: 1 });
    // The tracker has handed the event over and is waiting on the store: the ack can only follow it.
    await until(() => handed);
    expect(mock.server.requests.count({ path: EVENTS })).toBe(1);
    expect(spool.calls.ack).toBe(0);
    expect(made.stats()).toMatchObject({ inFlight: 1, deadLettered: 0 });
    release();
    await made.flush();
    expect(spool.calls.ack).toBe(1);
    expect(made.stats()).toMatchObject({ inFlight: 0, deadLettered: 1 });
  });
});

describe('an outage', () => {
  it('503s, then connection refused, then back: nothing lost, retried with backoff, stats true at every step', async () => {
    const proxy = await refusingProxy(mock.server.baseUrl);
    try {
      const clock = manualClock();
      const errors: unknown[] = [];
      const billing = clientFor(mock.server, { baseUrl: `${proxy.url}/api/`, maxRetries: 0 }, instantClock());
      const made = tracker(
        withTrackerClock(
          { concurrency: 4, onError: (error, event) => void errors.push([error, event]) },
          clock,
        ),
        billing,
      );
      mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
      const keys: string[] = [];
      for (let i = 0; i < 40; i++)
        keys.push((await made.track({ ...METER, quantity: 1 + (i % 3) })).event_key);
      const expected = keys.length + keys.reduce((sum, _, i) => sum + (i % 3), 0);

      // Down with 503s: several different events failing pause sending, then one probe per backoff.
      await until(() => clock.sleeping() > 0 && made.stats().inFlight === 0);
      let stats = made.stats();
      expectTrue(stats, 40, 4);
      expect(stats).toMatchObject({ recorded: 0, deadLettered: 0 });
      expect(stats.retries).toBeGreaterThanOrEqual(SERVICE_FAILING_EVENTS);
      // The sends under way when it began, no more.
      expect(stats.retries).toBeLessThanOrEqual(SERVICE_FAILING_EVENTS + 4 - 1);
      for (let round = 0; round < 3; round++) {
        const before = made.stats().retries;
        clock.advance(60_000);
        await until(() => made.stats().retries === before + 1 && clock.sleeping() > 0);
        stats = made.stats();
        expectTrue(stats, 40, 4);
        expect(stats.recorded).toBe(0);
        expect(stats.oldestQueuedMs).toBeGreaterThanOrEqual(60_000 * (round + 1));
      }
      // The waits grew: exponential backoff, not a fixed period.
      expect(Math.max(...clock.waits.slice(-2))).toBeGreaterThan(clock.waits[0] as number);

      // Down with the port closed: connection refused.
      mock.server.faults.clear();
      await proxy.down();
      for (let round = 0; round < 2; round++) {
        const before = made.stats().retries;
        clock.advance(60_000);
        await until(() => made.stats().retries === before + 1 && clock.sleeping() > 0);
        expectTrue(made.stats(), 40, 4);
      }
      const refused = errors.at(-1) as [unknown, SpooledEvent];
      expect(isBillingError(refused[0], 'APIConnectionError')).toBe(true);
      expect(String(refused[0])).toMatch(/ECONNREFUSED/);
      expect(keys).toContain(refused[1].event_key);
      expect(recordedEvents()).toHaveLength(0);

      // Back: the probe succeeds, full concurrency resumes, the queue drains.
      await proxy.up();
      clock.advance(60_000);
      const drained = made.flush();
      let steps = 0;
      while (made.stats().recorded < 40) {
        expectTrue(made.stats(), 40, 4);
        steps++;
        await new Promise((r) => setTimeout(r, 1));
      }
      await drained;
      expect(steps).toBeGreaterThan(0);
      stats = made.stats();
      expect(stats).toMatchObject({
        queued: 0,
        inFlight: 0,
        recorded: 40,
        deadLettered: 0,
        oldestQueuedMs: 0,
      });
      expect(stats.retries).toBe(errors.length);
      expect(recordedKeys()).toEqual(new Set(keys));
      expect(total()).toBe(expected);
    } finally {
      await proxy.close();
    }
  });

  it('a 429 with Retry-After is honoured: the next send waits at least that long', async () => {
    const clock = manualClock();
    // One clock for the client and the tracker, as in production: the client's cooldown after the
    // 429 is over exactly when the tracker's wait is.
    const made = tracker(withTrackerClock({}, clock), clientFor(mock.server, { maxRetries: 0 }, clock));
    mock.server.faults.add({ path: EVENTS, status: 429, headers: { 'retry-after': '90' } });
    await made.track({ ...METER, quantity: 1 });
    await until(() => clock.sleeping() > 0);
    expect(clock.waits).toEqual([90_000]);
    clock.advance(89_000);
    // Still in its one wait, and no other: nothing can send before that wait ends.
    expect(clock.sleeping()).toBe(1);
    expect(clock.waits).toEqual([90_000]);
    expect(mock.server.requests.count({ path: EVENTS })).toBe(1);
    clock.advance(1_000);
    await made.flush();
    expect(mock.server.requests.count({ path: EVENTS })).toBe(2);
    expect(made.stats()).toMatchObject({ recorded: 1, retries: 1 });
  });

  it('a 401 (a wrong API key) keeps the events: retried, not dead-lettered at once', async () => {
    const clock = manualClock();
    const letters: unknown[] = [];
    const billing = clientFor(mock.server, { apiKey: 'wrong-key', maxRetries: 0 });
    const made = tracker(withTrackerClock({ onDeadLetter: (e) => void letters.push(e) }, clock), billing);
    await made.track({ ...METER, quantity: 1 });
    await until(() => clock.sleeping() > 0);
    expect(made.stats()).toMatchObject({ queued: 1, retries: 1, deadLettered: 0 });
    expect(await made.close({ timeoutMs: 20 })).toEqual({ unsent: 1 });
    expect(letters).toEqual([]);
  });
});

describe('backpressure', () => {
  it("'wait': past maxQueued, track waits for room and resumes in order; nothing is dropped", async () => {
    const clock = manualClock();
    const made = tracker(withTrackerClock({ maxQueued: 5, concurrency: 2 }, clock));
    mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 5; i++) await made.track({ ...METER, quantity: 1, event_key: `k${i}` });
    const order: string[] = [];
    const waiting = [5, 6, 7].map((i) =>
      made
        .track({ ...METER, quantity: 1, event_key: `k${i}` })
        .then(({ event_key }) => order.push(event_key)),
    );
    // Every send has failed and the tracker sleeps on the test clock: no room can open until it is
    // advanced, so the waiting tracks have nothing left to wait for but that.
    await until(() => clock.sleeping() > 0 && made.stats().inFlight === 0);
    expect(order).toEqual([]);
    expect(made.stats().queued + made.stats().inFlight).toBe(5);
    mock.server.faults.clear();
    clock.advance(60_000);
    await Promise.all(waiting);
    expect(order).toEqual(['k5', 'k6', 'k7']);
    await made.flush();
    expect(made.stats()).toMatchObject({ recorded: 8, queued: 0 });
    expect(recordedKeys()).toEqual(new Set(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7']));
  });

  it("'reject': past maxQueued, track rejects typed and queues nothing; there is room again once sent", async () => {
    const clock = manualClock();
    const spool = spySpool();
    const made = tracker(withTrackerClock({ spool, maxQueued: 3, onFull: 'reject' }, clock));
    mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 3; i++) await made.track({ ...METER, quantity: 1 });
    const error = await caught(() => made.track({ ...METER, quantity: 1, event_key: 'refused' }));
    expect(isBillingError(error, 'UsageTrackerError') && error.code).toBe('full');
    expect(spool.calls.append).toBe(3);
    expect(made.stats().queued + made.stats().inFlight).toBe(3);
    mock.server.faults.clear();
    clock.advance(60_000);
    await made.flush();
    await made.track({ ...METER, quantity: 1, event_key: 'later' });
    await made.flush();
    expect(made.stats()).toMatchObject({ recorded: 4, queued: 0 });
    expect(mock.server.store.usageEvent('refused')).toBeUndefined();
    expect(mock.server.store.usageEvent('later')).toBeDefined();
  });

  it('close rejects the tracks waiting for room, typed', async () => {
    const clock = manualClock();
    const made = tracker(withTrackerClock({ maxQueued: 1 }, clock));
    mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
    await made.track({ ...METER, quantity: 1 });
    const waiting = caught(() => made.track({ ...METER, quantity: 1 }));
    await until(() => clock.sleeping() > 0);
    expect(await made.close({ timeoutMs: 10 })).toEqual({ unsent: 1 });
    const error = await waiting;
    expect(isBillingError(error, 'UsageTrackerError') && error.code).toBe('closed');
  });
});

describe('a failing spool', () => {
  it('a failed open rejects track (nothing queued), and the next track opens it again', async () => {
    const inner = memorySpool();
    let failOpen = true;
    const spool = spySpool({
      ...inner,
      open: () => (failOpen ? Promise.reject(new SpoolError('locked', 'held by pid 1')) : inner.open()),
    });
    const made = tracker({ spool });
    const error = await caught(() => made.track({ ...METER, quantity: 1 }));
    expect(isBillingError(error, 'SpoolError') && error.code).toBe('locked');
    expect(spool.calls.append).toBe(0);
    failOpen = false;
    await made.track({ ...METER, quantity: 1 });
    await made.flush();
    expect(made.stats()).toMatchObject({ recorded: 1, queued: 0 });
    expect(spool.calls.open).toBe(2);
  });

  it('a failed append rejects that track only, with the spool’s error; nothing is counted', async () => {
    const inner = memorySpool();
    let failures = 1;
    const made = tracker({
      spool: {
        ...inner,
        append: (events) =>
          failures-- > 0 ? Promise.reject(new SpoolError('io', 'disk full')) : inner.append(events),
      },
    });
    const error = await caught(() => made.track({ ...METER, quantity: 1, event_key: 'lost' }));
    expect(isBillingError(error, 'SpoolError') && error.code).toBe('io');
    expect(made.stats()).toMatchObject({ queued: 0, inFlight: 0 });
    await made.track({ ...METER, quantity: 1, event_key: 'kept' });
    await made.flush();
    expect(recordedKeys()).toEqual(new Set(['kept']));
  });

  it('failed takes and acks are told to onError and retried; the events are recorded all the same', async () => {
    const inner = memorySpool();
    let takeFailures = 2;
    let ackFailures = 1;
    const errors: unknown[] = [];
    const made = tracker({
      onError: (error) => void errors.push(error),
      spool: {
        ...inner,
        take: (max) =>
          takeFailures-- > 0 ? Promise.reject(new SpoolError('unavailable', 'take')) : inner.take(max),
        ack: (ids) =>
          ackFailures-- > 0 ? Promise.reject(new SpoolError('unavailable', 'ack')) : inner.ack(ids),
      },
    });
    for (let i = 0; i < 5; i++) await made.track({ ...METER, quantity: 1 });
    await made.flush();
    expect(made.stats()).toMatchObject({ recorded: 5, queued: 0, inFlight: 0 });
    expect(errors.map((e) => (e as Error).message)).toEqual(expect.arrayContaining(['take', 'ack']));
    expect(total()).toBe(5);
  });
});

describe('close', () => {
  it('sends what is queued, releases the spool, and resolves with nothing unsent', async () => {
    const spool = spySpool();
    const made = tracker({ spool });
    for (let i = 0; i < 20; i++) await made.track({ ...METER, quantity: 1 });
    expect(await made.close()).toEqual({ unsent: 0 });
    expect(spool.calls.close).toBe(1);
    expect(total()).toBe(20);
    expect(made.stats()).toMatchObject({ recorded: 20, queued: 0, inFlight: 0 });
  });

  it('timing out during an outage leaves the events in the spool, keys intact, for the next start', async () => {
    const clock = manualClock();
    const spool = memorySpool();
    const first = tracker(withTrackerClock({ spool }, clock));
    mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) keys.push((await first.track({ ...METER, quantity: 2 })).event_key);
    await until(() => clock.sleeping() > 0);
    const started = Date.now();
    expect(await first.close({ timeoutMs: 50 })).toEqual({ unsent: 5 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(recordedEvents()).toHaveLength(0);

    // The same spool, opened by the next tracker once the service is back: same keys, sent once.
    mock.server.faults.clear();
    const next = tracker({ spool });
    await next.flush();
    expect(recordedKeys()).toEqual(new Set(keys));
    expect(total()).toBe(10);
  });

  it('a flush still waiting when close gives up rejects typed, and nothing is left hanging', async () => {
    const clock = manualClock();
    const made = tracker(withTrackerClock({}, clock));
    mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
    await made.track({ ...METER, quantity: 1 });
    const flushed = caught(() => made.flush());
    await until(() => clock.sleeping() > 0);
    expect(await made.close({ timeoutMs: 10 })).toEqual({ unsent: 1 });
    const error = await flushed;
    expect(isBillingError(error, 'UsageTrackerError') && error.code).toBe('closed');
    expect(error.message).toMatch(/1 events unsent/);
  });

  it('a close that times out while a request hangs aborts it and leaves the event', async () => {
    mock.server.faults.add({ path: EVENTS, delayMs: 5_000 });
    const made = tracker();
    await made.track({ ...METER, quantity: 1 });
    await until(() => made.stats().inFlight === 1);
    const started = Date.now();
    expect(await made.close({ timeoutMs: 30 })).toEqual({ unsent: 1 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('after close, track rejects typed; flush resolves; close again gives the same answer', async () => {
    const made = tracker();
    await made.track({ ...METER, quantity: 1 });
    const closed = await made.close();
    const error = await caught(() => made.track({ ...METER, quantity: 1 }));
    expect(isBillingError(error, 'UsageTrackerError') && error.code).toBe('closed');
    expect(error.message).toMatch(/closed/);
    await made.flush();
    expect(await made.close()).toEqual(closed);
    expect(total()).toBe(1);
  });

  it('a close that times out while onDeadLetter runs leaves the event unacknowledged', async () => {
    const spool = spySpool();
    const made = tracker({ spool, onDeadLetter: () => new Promise<void>(() => {}) });
    await made.track({ ...PREPAID, quantity: 1 });
    await until(() => mock.server.requests.count({ path: EVENTS }) === 1);
    expect(await made.close({ timeoutMs: 30 })).toEqual({ unsent: 1 });
    expect(spool.calls.ack).toBe(0);
  });

  it('a tracker never used opened its spool when made, and close releases it with nothing unsent', async () => {
    const spool = spySpool();
    const made = tracker({ spool });
    expect(spool.calls.open).toBe(1);
    expect(await made.close()).toEqual({ unsent: 0 });
    expect(spool.calls.close).toBe(1);
    expect(spool.calls.append).toBe(0);
  });
});
