import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createUsageTracker,
  isBillingError,
  type UsageTracker,
  type UsageTrackerOptions,
} from '../../src/index.js';
import { fileSpool } from '../../src/node/index.js';
import type { Spool, SpooledEvent } from '../../src/tracker/spool.js';
import { caught, clientFor, instantClock, until, useMockServer } from '../helpers.js';
import { METER, manualClock, withTrackerClock } from './support.js';

// What a crash leaves in a durable spool is sent when the next tracker is created: without any
// track, counted in stats().queued before it is taken, flushed by close() within its timeout.

const mock = useMockServer();
const EVENTS = '/api/usage/events/';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
const dirs: string[] = [];
const made: UsageTracker[] = [];
const held: Spool[] = [];
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  for (const tracker of made.splice(0)) await tracker.close({ timeoutMs: 0 }).catch(() => {});
  for (const spool of held.splice(0)) await spool.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await new Promise((resolve) => setTimeout(resolve, 10));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-leftovers-'));
  dirs.push(dir);
  return dir;
}

/** Writes `count` events into a file spool at `dir` and closes it unsent, as a run that crashed leaves them. */
async function crashLeftovers(dir: string, count: number): Promise<string[]> {
  const spool = fileSpool(dir);
  await spool.open();
  const events: SpooledEvent[] = Array.from({ length: count }, (_, n) => ({
    ...METER,
    quantity: 1,
    event_key: `left-${n}`,
  }));
  await spool.append(events);
  await spool.close();
  return events.map((e) => e.event_key);
}

/** Keys a file spool at `dir` still holds. */
async function heldKeys(dir: string): Promise<string[]> {
  const spool = fileSpool(dir);
  await spool.open();
  try {
    return (await spool.take(Number.MAX_SAFE_INTEGER)).map((e) => e.event.event_key);
  } finally {
    await spool.close();
  }
}

function tracker(options: UsageTrackerOptions, billing = clientFor(mock.server, { maxRetries: 0 })) {
  const tracker = createUsageTracker(billing, options);
  made.push(tracker);
  return tracker;
}

const recordedLeftovers = () => mock.server.store.usageEvents.filter((e) => e.event_key.startsWith('left-'));

describe('a durable spool’s leftovers', () => {
  it('are sent from creation, without any track; stats().queued counts them all before they are taken', async () => {
    const dir = tempDir();
    const keys = await crashLeftovers(dir, 600);
    const clock = manualClock();
    const errors: unknown[] = [];
    mock.server.faults.add({ path: EVENTS, status: 503, times: Number.POSITIVE_INFINITY });
    const restarted = tracker(
      withTrackerClock({ spool: fileSpool(dir), onError: (error) => void errors.push(error) }, clock),
    );
    // Down: the first sends fail and the tracker backs off, every leftover counted as waiting.
    await until(() => clock.sleeping() > 0 && restarted.stats().inFlight === 0);
    expect(mock.server.requests.count({ path: EVENTS })).toBeGreaterThan(0);
    expect(restarted.stats()).toMatchObject({ queued: 600, inFlight: 0, recorded: 0 });
    expect(errors.length).toBeGreaterThan(0);

    // Back: everything is sent, still without a track.
    mock.server.faults.clear();
    clock.advance(60_000);
    await until(() => restarted.stats().recorded === 600, 20_000);
    expect(restarted.stats()).toMatchObject({ queued: 0, inFlight: 0, recorded: 600 });
    expect(await restarted.close()).toEqual({ unsent: 0 });
    expect(new Set(recordedLeftovers().map((e) => e.event_key))).toEqual(new Set(keys));
    expect(await heldKeys(dir)).toEqual([]);
  });

  it('a tracker restarted after a crash and closed at once sends them all within close', async () => {
    const dir = tempDir();
    const keys = await crashLeftovers(dir, 1500);
    const restarted = tracker({ spool: fileSpool(dir), concurrency: 16 });
    expect(await restarted.close({ timeoutMs: 60_000 })).toEqual({ unsent: 0 });
    expect(restarted.stats()).toMatchObject({ queued: 0, inFlight: 0, recorded: 1500 });
    expect(recordedLeftovers()).toHaveLength(1500);
    expect(new Set(recordedLeftovers().map((e) => e.event_key))).toEqual(new Set(keys));
    expect(await heldKeys(dir)).toEqual([]);
  }, 60_000);

  it('close({ timeoutMs }) sends what it can; unsent counts what the spool still holds', async () => {
    const dir = tempDir();
    await crashLeftovers(dir, 1000);
    mock.server.faults.add({ path: EVENTS, delayMs: 20, times: Number.POSITIVE_INFINITY });
    const restarted = tracker(withTrackerClock({ spool: fileSpool(dir), concurrency: 2 }, instantClock()));
    const { unsent } = await restarted.close({ timeoutMs: 300 });
    const sent = recordedLeftovers().length;
    expect(sent).toBeGreaterThan(0);
    // Far more than one take's worth is left: counted although this process never took it.
    expect(unsent).toBeGreaterThan(500);
    expect(unsent + restarted.stats().recorded).toBe(1000);
    expect(await heldKeys(dir)).toHaveLength(unsent);
  });

  it('a spool that cannot be opened at creation tells onError; track and flush reject typed; nothing unhandled', async () => {
    const dir = tempDir();
    await crashLeftovers(dir, 3);
    const holder = fileSpool(dir);
    await holder.open();
    held.push(holder);
    const errors: unknown[] = [];
    const locked = tracker({ spool: fileSpool(dir), onError: (error) => void errors.push(error) });
    await until(() => errors.length > 0);
    expect(isBillingError(errors[0], 'SpoolError') && errors[0].code).toBe('locked');
    expect(locked.stats().queued).toBe(0);
    const tracked = await caught(() => locked.track({ ...METER, quantity: 1 }));
    expect(isBillingError(tracked, 'SpoolError') && tracked.code).toBe('locked');
    const flushed = await caught(() => locked.flush());
    expect(isBillingError(flushed, 'SpoolError') && flushed.code).toBe('locked');
    expect(mock.server.requests.count({ path: EVENTS })).toBe(0);

    // Once the holder is gone, the next call opens it and the leftovers go first.
    await holder.close();
    await locked.flush();
    expect(recordedLeftovers()).toHaveLength(3);
    expect(await locked.close()).toEqual({ unsent: 0 });
  });
});
