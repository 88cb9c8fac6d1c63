import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createUsageTracker,
  memorySpool,
  type SpooledEvent,
  type UsageTracker,
  type UsageTrackerOptions,
} from '../../src/index.js';
import { hasTestClock, realClock } from '../../src/util/clock.js';
import { clientFor, instantClock, until, useMockServer } from '../helpers.js';
import { METER, manualClock, PREPAID, spySpool, withTrackerClock } from './support.js';

const mock = useMockServer();
const EVENTS = '/api/usage/events/';

const open: UsageTracker[] = [];
afterEach(async () => {
  for (const tracker of open.splice(0)) await tracker.close({ timeoutMs: 0 }).catch(() => {});
});

/** A tracker whose client does not retry; its backoff waits end at once unless the test gives a clock. */
function tracker(options: UsageTrackerOptions, billing = clientFor(mock.server, { maxRetries: 0 })) {
  const made = createUsageTracker(
    billing,
    hasTestClock(options) ? options : withTrackerClock(options, instantClock()),
  );
  open.push(made);
  return made;
}

const meterTotal = (account = METER.account_ref_id) =>
  mock.server.store.usageTotal(account, METER.product_code, METER.meter_code);
let seeded = { active: 0, multi: 0, keys: new Set<string>() };
beforeEach(() => {
  seeded = {
    active: meterTotal(),
    multi: meterTotal('acct_multi'),
    keys: new Set(mock.server.store.usageEvents.map((e) => e.event_key)),
  };
});
/** Usage the test added to the meter of `account`. */
const added = (account = METER.account_ref_id) =>
  meterTotal(account) - (account === 'acct_multi' ? seeded.multi : seeded.active);
const recordedEvents = () => mock.server.store.usageEvents.filter((e) => !seeded.keys.has(e.event_key));
const sentKeys = () =>
  mock.server.requests.all({ path: EVENTS }).map((r) => (r.body as SpooledEvent).event_key);

describe('aggregate: { windowMs }', () => {
  it('10,000 unit events on one meter: at most 1/50 as many requests, the total exact', async () => {
    // Real time for the windows (not a backoff: nothing fails here).
    const made = tracker(withTrackerClock({ aggregate: { windowMs: 100 } }, realClock));
    for (let i = 0; i < 10_000; i++) await made.track({ ...METER, quantity: 1 });
    await made.flush();
    const requests = mock.server.requests.count({ path: EVENTS });
    expect(requests).toBeGreaterThanOrEqual(10); // at most 1000 events in one aggregate
    expect(requests).toBeLessThanOrEqual(200);
    expect(added()).toBe(10_000);
    expect(made.stats()).toMatchObject({ recorded: 10_000, queued: 0, inFlight: 0, deadLettered: 0 });
    // Each request was one aggregate under its own key, none sent twice.
    expect(new Set(sentKeys()).size).toBe(requests);
    expect(recordedEvents()).toHaveLength(requests);
  });

  it('a window closes windowMs after its first event, on the tracker’s clock, into one event', async () => {
    const clock = manualClock();
    const made = tracker(withTrackerClock({ aggregate: { windowMs: 1_000 } }, clock));
    for (const quantity of [1, 2, 3, 4, 5]) await made.track({ ...METER, quantity });
    await until(() => clock.sleeping() === 1);
    expect(clock.waits).toEqual([1_000]);
    expect(made.stats()).toMatchObject({ queued: 5, inFlight: 0 });
    clock.advance(999);
    await new Promise((r) => setTimeout(r, 30));
    expect(mock.server.requests.count({ path: EVENTS })).toBe(0);
    expect(made.stats().oldestQueuedMs).toBe(999);
    clock.advance(1);
    await until(() => made.stats().recorded === 5);
    expect(mock.server.requests.count({ path: EVENTS })).toBe(1);
    const [event] = recordedEvents();
    expect(event).toMatchObject({ ...METER, quantity: 15, metadata: null });
    expect(made.stats()).toMatchObject({ queued: 0, inFlight: 0, recorded: 5 });
  });

  it('events with metadata or a key of yours are sent one by one, as tracked', async () => {
    const clock = manualClock();
    const made = tracker(withTrackerClock({ aggregate: { windowMs: 60_000 } }, clock));
    const own: string[] = [];
    for (let i = 0; i < 30; i++) {
      await made.track({ ...METER, quantity: 1 });
      if (i % 3 === 0) await made.track({ ...METER, quantity: 2, metadata: { job: i } });
      if (i % 3 === 1)
        own.push((await made.track({ ...METER, quantity: 3, event_key: `job-${i}` })).event_key);
    }
    await made.flush(); // closes the windows at once: the clock never moved
    expect(clock.waits.length).toBeGreaterThan(0);
    expect(clock.waits.every((ms) => ms === 60_000)).toBe(true);
    const events = recordedEvents();
    expect(events.filter((e) => e.metadata !== null)).toHaveLength(10);
    for (const e of events.filter((e) => e.metadata !== null)) expect(e.quantity).toBe(2);
    for (const key of own) expect(mock.server.store.usageEvent(key)?.quantity).toBe(3);
    // The summable ones in a few sums (a flush closes each window as its events come out of the spool).
    const sums = events.filter((e) => e.metadata === null && !own.includes(e.event_key));
    expect(sums.length).toBeLessThanOrEqual(3);
    expect(sums.reduce((total, e) => total + e.quantity, 0)).toBe(30);
    expect(mock.server.requests.count({ path: EVENTS })).toBe(20 + sums.length);
    expect(added()).toBe(30 + 20 + 30);
    expect(made.stats()).toMatchObject({ recorded: 50, queued: 0 });
  });

  it('each account, product and meter is summed apart', async () => {
    const made = tracker(withTrackerClock({ aggregate: { windowMs: 60_000 } }, manualClock()));
    for (let i = 0; i < 200; i++) {
      await made.track({ ...METER, quantity: 1 });
      await made.track({ ...METER, account_ref_id: 'acct_multi', quantity: 2 });
    }
    await made.flush();
    expect(added()).toBe(200);
    expect(added('acct_multi')).toBe(400);
    expect(made.stats().recorded).toBe(400);
    expect(mock.server.requests.count({ path: EVENTS })).toBeLessThanOrEqual(8);
  });

  it('the aggregate replaces its members in the spool before it is sent: a crash and a replay send the same key', async () => {
    const clock = manualClock();
    const spool = spySpool(memorySpool());
    const first = tracker(withTrackerClock({ spool, aggregate: { windowMs: 100 } }, clock));
    mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 40; i++) await first.track({ ...METER, quantity: 1 });
    // The tracker takes what was tracked on the next turn of the event loop (never on track's path).
    await new Promise((resolve) => setTimeout(resolve, 5));
    clock.advance(100);
    // Formed, written to the spool, then sent: the service is down, so it fails and waits.
    await until(() => first.stats().retries >= 1 && clock.sleeping() > 0);
    const replaces = spool.calls.log.filter((line) => line.startsWith('replace'));
    expect(replaces).toHaveLength(1);
    const key = (replaces[0] as string).split(' by ')[1] as string;
    expect(replaces[0]).toBe(`replace 40 by ${key}`);
    expect(sentKeys()).toEqual([key]);
    expect(first.stats()).toMatchObject({ queued: 40, recorded: 0 });

    // The process "dies": close gives up at once; the spool holds the aggregate, not its members.
    expect(await first.close({ timeoutMs: 0 })).toEqual({ unsent: 40 });
    await spool.open();
    const left = await spool.take(100);
    expect(left.map((e) => e.event)).toEqual([{ ...METER, quantity: 40, event_key: key }]);
    await spool.close();

    // The next start, with the service back, sends that aggregate under the same key, once.
    mock.server.faults.clear();
    const next = tracker({ spool, aggregate: { windowMs: 100 } });
    await next.flush();
    expect(sentKeys().every((k) => k === key)).toBe(true);
    expect(recordedEvents()).toEqual([expect.objectContaining({ event_key: key, quantity: 40 })]);
    expect(added()).toBe(40);
  });

  it('a refused aggregate is one dead letter, counting every event it sums', async () => {
    const letters: [SpooledEvent, unknown][] = [];
    const made = tracker(
      withTrackerClock(
        {
          aggregate: { windowMs: 60_000 },
          onDeadLetter: (event, reason) => void letters.push([event, reason]),
        },
        manualClock(),
      ),
    );
    for (let i = 0; i < 25; i++) await made.track({ ...PREPAID, quantity: 2 });
    await made.flush();
    expect(letters).toHaveLength(1);
    expect(letters[0]?.[0]).toMatchObject({ ...PREPAID, quantity: 50 });
    expect(letters[0]?.[1]).toMatchObject({ type: 'refused', result: { error_code: 'invalid_usage_model' } });
    expect(made.stats()).toMatchObject({ deadLettered: 25, recorded: 0, queued: 0 });
  });

  it('stats stay true while events wait in windows and aggregates are sent', async () => {
    mock.server.faults.add({ path: EVENTS, delayMs: 20, times: Number.POSITIVE_INFINITY });
    const made = tracker(withTrackerClock({ aggregate: { windowMs: 5 }, concurrency: 2 }, realClock));
    let tracked = 0;
    const check = () => {
      const s = made.stats();
      expect(s.queued + s.inFlight + s.recorded + s.deadLettered).toBe(tracked);
    };
    for (let i = 0; i < 2_000; i++) {
      await made.track({ ...METER, quantity: 1 });
      tracked++;
      if (i % 50 === 0) {
        check();
        await new Promise((r) => setTimeout(r, 1));
        check();
      }
    }
    await made.flush();
    check();
    expect(added()).toBe(2_000);
  });
});
