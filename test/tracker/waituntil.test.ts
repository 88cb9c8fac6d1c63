import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createUsageTracker,
  InvalidRequestError,
  memorySpool,
  type UsageTracker,
  type UsageTrackerOptions,
} from '../../src/index.js';
import { fileSpool } from '../../src/node/index.js';
import { createSumWindows } from '../../src/tracker/sum-windows.js';
import { caught, clientFor, useMockServer } from '../helpers.js';
import { METER, manualClock, PREPAID } from './support.js';
import { platform } from './waituntil-platform.js';

// A serverless function or an edge isolate is frozen or dropped once its answer is out and the
// promises handed to `waitUntil` settled: no close(), no shutdown hook. Every event tracked must be
// recorded by then (or dead-lettered, or in a spool a relay drains).
const mock = useMockServer();
/** How many times the mock recorded `key`. */
const recordedTimes = (key: string) =>
  mock.server.store.usageEvents.filter((e) => e.event_key === key).length;

const dirs: string[] = [];
const trackers: UsageTracker[] = [];
afterEach(async () => {
  // Only to free the test's resources: every assertion was made before, on a dropped tracker.
  for (const tracker of trackers.splice(0)) await tracker.close({ timeoutMs: 0 }).catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tracker = (options: UsageTrackerOptions) => {
  const made = createUsageTracker(clientFor(mock.server), options);
  trackers.push(made);
  return made;
};
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-waituntil-'));
  dirs.push(dir);
  return dir;
};

const SPOOLS = [
  { name: 'memory spool', spool: () => memorySpool() },
  { name: 'file spool', spool: () => fileSpool(tempDir()) },
];

describe.each(SPOOLS)('waitUntil with a $name', ({ spool }) => {
  it('per call: once the promises handed settle, every event is recorded, once', async () => {
    const usage = tracker({ spool: spool() });
    // Twenty requests, each with its own context, as an edge runtime runs them.
    const contexts = Array.from({ length: 20 }, () => platform());
    const keys = await Promise.all(
      contexts.map(async (ctx, i) => {
        const { event_key } = await usage.track({ ...METER, quantity: i + 1 }, { waitUntil: ctx.waitUntil });
        return event_key;
      }),
    );
    await Promise.all(contexts.map((ctx) => ctx.settled()));
    expect(keys.map(recordedTimes)).toEqual(keys.map(() => 1));
    expect(contexts.map((ctx) => [ctx.handed, ctx.rejected])).toEqual(contexts.map(() => [1, 0]));
    expect(usage.stats()).toMatchObject({ recorded: 20, queued: 0, inFlight: 0 });
  });

  it("the tracker's option: a refused event settles too (dead-lettered), and a bad one never rejects it", async () => {
    const ctx = platform();
    const deadLetters: string[] = [];
    const usage = tracker({
      spool: spool(),
      waitUntil: ctx.waitUntil,
      onDeadLetter: (e) => void deadLetters.push(e.event_key),
    });
    const { event_key: good } = await usage.track({ ...METER, quantity: 2 });
    const { event_key: refused } = await usage.track({ ...PREPAID, quantity: 1 });
    const bad = await caught(() => usage.track({ ...METER, quantity: -1 }));
    expect(bad).toBeInstanceOf(InvalidRequestError);
    await ctx.settled();
    expect([ctx.handed, ctx.rejected]).toEqual([3, 0]);
    expect(recordedTimes(good)).toBe(1);
    expect(deadLetters).toEqual([refused]);
    expect(usage.stats()).toMatchObject({ recorded: 1, deadLettered: 1, queued: 0 });
  });
});

describe('waitUntil and aggregation', () => {
  it('a window is not held open past WAIT_UNTIL_WINDOW_MS for an event handed to waitUntil; events within it are summed', async () => {
    const ctx = platform();
    // One minute: no platform keeps an instance that long after the answer.
    const usage = tracker({ aggregate: { windowMs: 60_000 }, waitUntil: ctx.waitUntil });
    const before = new Set(mock.server.store.usageEvents.map((e) => e.event_key));
    await Promise.all(Array.from({ length: 5 }, () => usage.track({ ...METER, quantity: 3 })));
    await ctx.settled();
    const sent = mock.server.store.usageEvents.filter((e) => !before.has(e.event_key));
    expect(sent.map((e) => e.quantity)).toEqual([15]);
    expect(usage.stats()).toMatchObject({ recorded: 5, queued: 0 });
  });

  it('sum windows: an event with a shorter bound closes its window early; a longer one does not stretch it', async () => {
    /** The windows' timers end in a promise's reaction: run them. */
    const reactions = () => new Promise<void>((resolve) => setImmediate(resolve));
    const clock = manualClock();
    const formed: number[][] = [];
    const windows = createSumWindows<{ event: typeof METER & { quantity: number; event_key: string } }>({
      windowMs: 10_000,
      clock,
      formed: (members) => void formed.push(members.map((m) => m.event.quantity)),
    });
    const member = (quantity: number) => ({ event: { ...METER, quantity, event_key: `k${quantity}` } });
    windows.add(member(1));
    clock.advance(500);
    windows.add(member(2), 1000);
    windows.add(member(3), 5000); // later than the window's close now: no change
    clock.advance(999);
    await reactions();
    expect(formed).toEqual([]);
    clock.advance(1);
    await reactions();
    expect(formed).toEqual([[1, 2, 3]]);
    windows.add(member(4), 20_000); // a bound past windowMs: the window's own length holds
    clock.advance(9_999);
    await reactions();
    expect(formed).toHaveLength(1);
    clock.advance(1);
    await reactions();
    expect(formed).toEqual([[1, 2, 3], [4]]);
  });
});

describe('relay: false, a tracker that only writes', () => {
  it('appends and never sends; flush resolves once the events are in the spool; a relay sends them once', async () => {
    const dir = tempDir();
    const ctx = platform();
    const writer = createUsageTracker(clientFor(mock.server), {
      spool: fileSpool(dir),
      relay: false,
      waitUntil: ctx.waitUntil,
    });
    const keys: string[] = [];
    for (let i = 1; i <= 5; i++) keys.push((await writer.track({ ...METER, quantity: i })).event_key);
    await ctx.settled(); // settled once in the spool: nothing to send from here
    await writer.flush();
    expect([ctx.handed, ctx.rejected]).toEqual([5, 0]);
    expect(writer.stats()).toMatchObject({ queued: 0, inFlight: 0, recorded: 0 });
    expect(await writer.close()).toEqual({ unsent: 0 });
    expect(keys.map(recordedTimes)).toEqual([0, 0, 0, 0, 0]);
    // The file spool is one process's at a time: the relay opens it once the writer let go.
    const relay = tracker({ spool: fileSpool(dir) });
    await relay.flush();
    expect(keys.map(recordedTimes)).toEqual([1, 1, 1, 1, 1]);
    expect(relay.stats()).toMatchObject({ recorded: 5 });
  });
});

describe('options', () => {
  const issues = async (fn: () => unknown) =>
    ((await caught(fn)) as InvalidRequestError).issues.map((issue) => issue.field);
  it('waitUntil must be a function, on the tracker and per call', async () => {
    expect(
      await issues(() => createUsageTracker(clientFor(mock.server), { waitUntil: 'later' as never })),
    ).toEqual(['options.waitUntil']);
    const usage = tracker({});
    expect(await issues(() => usage.track({ ...METER, quantity: 1 }, { waitUntil: {} as never }))).toEqual([
      'options.waitUntil',
    ]);
    expect(usage.stats().queued).toBe(0);
  });
  it('relay: false needs a durable spool and no aggregate; relay must be a boolean', async () => {
    const billing = clientFor(mock.server);
    expect(await issues(() => createUsageTracker(billing, { relay: false }))).toEqual(['options.relay']);
    expect(await issues(() => createUsageTracker(billing, { relay: false, spool: memorySpool() }))).toEqual([
      'options.relay',
    ]);
    expect(
      await issues(() =>
        createUsageTracker(billing, {
          relay: false,
          spool: fileSpool(tempDir()),
          aggregate: { windowMs: 100 },
        }),
      ),
    ).toEqual(['options.aggregate']);
    expect(await issues(() => createUsageTracker(billing, { relay: 'no' as never }))).toEqual([
      'options.relay',
    ]);
  });
});
