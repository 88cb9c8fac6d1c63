// The usage tracker: `track` into memory vs `usage.record` over loopback (tinybench, the mock in its
// own process); a file spool under 1024 concurrent callers (group commit) and nothing lost at close;
// draining events at 20 ms per answer vs `recordMany`; aggregation. The last three on the mock in this
// process, whose store shows what was recorded.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { BillingClient, createUsageTracker } from 'billing-sdk';
import { fileSpool } from 'billing-sdk/node';
import { DEMO } from 'billing-sdk/testing';
import { goal, r3, sleep, startMock, timeTasks } from './lib.mjs';
import { startMockProcess } from './mock-server.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Usage tracker';
export const how =
  '`track` vs `record`: tinybench against the mock in its own process (`record` for 2 s; `track` for 150 ms, what it queued then flushed, untimed). A queue of 100,000 on the memory spool with the service unreachable: heap per event after a full collection, then `track` back to back for 1 s on top of it, each call timed (mean, p99.9). The rest against the mock in this process: 16 and 1024 loops of `await track()` into `fileSpool(dir)` for 3 s, then `close({ timeoutMs: 0 })` and the file read back by a new spool; drains of 2,000 events with the mock answering after 20 ms; aggregation: 1,000 `track` calls a second for 2 s on one meter.';

const METER = { product_code: DEMO.products.apiGateway.product_code, meter_code: DEMO.meters.apiCalls };
const DRAIN_EVENTS = 2000;
/** Events already queued when `track` is timed back to back (issue 41 §4). */
const QUEUED = 100_000;
const forever = Number.POSITIVE_INFINITY;

async function perCall() {
  const mock = await startMockProcess({ accounts: 2 });
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl });
  const tracker = createUsageTracker(billing);
  const record = () => billing.usage.record({ account_ref_id: 'acct_0', ...METER, quantity: 1 });
  // Each track queues an event the tracker's sender then posts: a short window (thousands of calls),
  // and what it queued is sent (flushed) after its warm-up and its run, untimed, so the record calls
  // never share the mock with the sender.
  const track = {
    fn: () => tracker.track({ account_ref_id: 'acct_1', ...METER, quantity: 1 }),
    off: () => tracker.flush(),
  };
  const t = {
    ...(await timeTasks({ 'usage.record (loopback)': record }, { time: 2000, warmupTime: 500 })),
    ...(await timeTasks({ 'tracker.track (memory spool)': track }, { time: 150, warmupTime: 50 })),
  };
  await tracker.close();
  mock.stop();
  return t;
}

/**
 * A queue of QUEUED events on the memory spool, the service unreachable (a closed port: the tracker
 * pauses and keeps them all): the heap each costs (after a full collection), then `track` back to
 * back for 1 s on top of it, each call timed: what a long queue costs the calls that add to it.
 */
export async function queuedTrack() {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const billing = new BillingClient({
    apiKey: 'sk_test_bench',
    baseUrl: 'http://127.0.0.1:9/api/',
    maxRetries: 0,
    logLevel: 'off',
  });
  const tracker = createUsageTracker(billing, { maxQueued: 10_000_000, onError: () => {} });
  const track = () => tracker.track({ account_ref_id: 'acct_1', ...METER, quantity: 1 });
  for (let i = 0; i < 10; i++) await track();
  await sleep(200); // the first sends were refused: the tracker is paused, nothing leaves the queue
  const settle = async () => {
    await sleep(20);
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const before = await settle();
  for (let i = 0; i < QUEUED; i++) await track();
  const heapPerEvent = ((await settle()) - before) / QUEUED;
  // Made before timing, so the loop's own bookkeeping allocates nothing while `track` is timed.
  const times = new Float64Array(4_000_000);
  let calls = 0;
  const end = performance.now() + 1000;
  while (performance.now() < end && calls < times.length) {
    const t0 = performance.now();
    await track();
    times[calls++] = (performance.now() - t0) * 1000;
  }
  await tracker.close({ timeoutMs: 0 });
  const us = times.subarray(0, calls).sort();
  const at = (p) => r3(us[Math.min(us.length - 1, Math.floor(p * us.length))]);
  const mean = r3(us.reduce((sum, x) => sum + x, 0) / us.length);
  return {
    queued: QUEUED,
    heapPerEvent: r3(heapPerEvent),
    calls: us.length,
    mean,
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
  };
}

/** `callers` loops of `track` into a file spool for 3 s; then close, and read what is left back. */
async function groupCommit(mock, billing, callers) {
  const dir = await mkdtemp(join(tmpdir(), 'billing-bench-spool-'));
  const account = `acct_file_${callers}`;
  await mock.lifecycle.subscribe({ account_ref_id: account });
  const tracker = createUsageTracker(billing, { spool: fileSpool(dir), maxQueued: 10_000_000 });
  let stop = false;
  let tracked = 0;
  const loops = Array.from({ length: callers }, async () => {
    while (!stop) {
      await tracker.track({ account_ref_id: account, ...METER, quantity: 1 });
      tracked++;
    }
  });
  await sleep(500);
  const from = tracked;
  const t0 = performance.now();
  await sleep(3000);
  const perSec = Math.round((tracked - from) / ((performance.now() - t0) / 1000));
  stop = true;
  await Promise.all(loops);
  await tracker.close({ timeoutMs: 0 });
  const reopened = fileSpool(dir);
  await reopened.open();
  const left = await reopened.take(10_000_000);
  await reopened.close();
  await rm(dir, { recursive: true, force: true });
  const recorded = mock.store.usageEvents.filter((e) => e.account_ref_id === account);
  // An event both recorded and still in the file (sent, its ack not yet written) is sent again under
  // its event_key and answered idempotent: counted once.
  const kept = new Set([...recorded, ...left.map((s) => s.event ?? s)].map((e) => e.event_key)).size;
  return { callers, perSec, tracked, recorded: recorded.length, left: left.length, kept };
}

/** DRAIN_EVENTS events (quantity i + 1) on a fresh account by `how`; wall time, and the store's view. */
async function drain(mock, billing, how) {
  const account = `acct_drain_${how}`;
  await mock.lifecycle.subscribe({ account_ref_id: account });
  const events = Array.from({ length: DRAIN_EVENTS }, (_, i) => ({
    account_ref_id: account,
    ...METER,
    quantity: i + 1,
  }));
  const dir = how === 'file spool' ? await mkdtemp(join(tmpdir(), 'billing-bench-drain-')) : undefined;
  const t0 = performance.now();
  if (how === 'recordMany') await billing.usage.recordMany(events, { concurrency: 16 });
  else {
    const tracker = createUsageTracker(billing, {
      concurrency: 16,
      ...(dir ? { spool: fileSpool(dir) } : {}),
    });
    for (const e of events) await tracker.track(e);
    await tracker.flush();
    await tracker.close();
  }
  const ms = Math.round(performance.now() - t0);
  if (dir) await rm(dir, { recursive: true, force: true });
  const stored = mock.store.usageEvents.filter((e) => e.account_ref_id === account);
  const exact =
    stored.length === DRAIN_EVENTS && new Set(stored.map((e) => e.quantity)).size === DRAIN_EVENTS;
  return { how, ms, exact };
}

/** 1000 unit `track` calls a second for 2 s on one meter, then flush: the POSTs sent and the total. */
async function aggregation(mock, billing, aggregate) {
  const account = `acct_agg_${aggregate ? 'on' : 'off'}`;
  await mock.lifecycle.subscribe({ account_ref_id: account });
  const tracker = createUsageTracker(billing, {
    concurrency: 16,
    ...(aggregate ? { aggregate: { windowMs: 500 } } : {}),
  });
  const before = mock.requests.count({ method: 'POST', path: '/api/usage/events/' });
  const t0 = performance.now();
  for (let sent = 0; sent < 2000; ) {
    const due = Math.min(2000, Math.floor(performance.now() - t0));
    for (; sent < due; sent++) tracker.track({ account_ref_id: account, ...METER, quantity: 1 });
    await sleep(10);
  }
  await tracker.flush();
  await tracker.close();
  const requests = mock.requests.count({ method: 'POST', path: '/api/usage/events/' }) - before;
  const total = mock.store.usageTotal(account, METER.product_code, METER.meter_code);
  return { aggregate: Boolean(aggregate), requests, total };
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const t = await perCall();
  const queued = await queuedTrack();
  const mock = await startMock();
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
  const files = [];
  for (const callers of [16, 1024]) files.push(await groupCommit(mock, billing, callers));
  mock.faults.add({ method: 'POST', path: '/api/usage/events/', delayMs: 20, times: forever });
  const drains = [];
  for (const how of ['recordMany', 'memory spool', 'file spool'])
    drains.push(await drain(mock, billing, how));
  const aggregated = [await aggregation(mock, billing, false), await aggregation(mock, billing, true)];
  await mock.close();

  const record = t['usage.record (loopback)'];
  const track = t['tracker.track (memory spool)'];
  const ratio = r3(record.mean / track.mean);
  const queuedRatio = r3(record.mean / queued.mean);
  const big = files.at(-1);
  const [many, memory, file] = drains;
  return {
    goals: [
      goal(
        'tracker.track into memory vs usage.record over loopback (mean)',
        `${track.mean} µs vs ${record.mean} µs: ${ratio}× less (track p99 ${track.p99} µs)`,
        '≥ 100×',
        ratio >= 100,
      ),
      goal(
        `heap per queued event (${QUEUED.toLocaleString('en')} queued on the memory spool)`,
        `${queued.heapPerEvent} B`,
        '≤ 300 B',
        queued.heapPerEvent <= 300,
      ),
      goal(
        `tracker.track with ${QUEUED.toLocaleString('en')} queued vs usage.record (mean, 1 s back to back)`,
        `${queued.mean} µs vs ${record.mean} µs: ${queuedRatio}× less (median ${queued.p50} µs, p99 ${queued.p99} µs, ${queued.calls} calls)`,
        '≥ 100×',
        queuedRatio >= 100,
      ),
      goal(
        `tracker.track p99.9 with ${QUEUED.toLocaleString('en')} queued`,
        `${queued.p999} µs`,
        '≤ 100 µs',
        queued.p999 <= 100,
      ),
      goal(
        'file spool, 1024 concurrent callers',
        `${big.perSec} events/s`,
        '≥ 20,000 events/s',
        big.perSec >= 20_000,
      ),
      goal(
        'nothing lost at close: distinct event keys recorded by the service or left in the spool file',
        files
          .map((f) => `${f.kept} of ${f.tracked} (${f.recorded} recorded, ${f.left} in the file)`)
          .join('; '),
        'all tracked',
        files.every((f) => f.kept === f.tracked),
      ),
      goal(
        `drain of ${DRAIN_EVENTS} events at 20 ms per answer, concurrency 16`,
        `recordMany ${many.ms} ms; tracker ${memory.ms} ms (${r3(memory.ms / many.ms)}×), with a file spool ${file.ms} ms (${r3(file.ms / many.ms)}×); each event recorded once: ${drains.every((d) => d.exact)}`,
        'each event recorded exactly once',
        drains.every((d) => d.exact),
      ),
      goal(
        'aggregation: 2,000 unit events on one meter',
        `${aggregated[0].requests} requests without aggregate, ${aggregated[1].requests} with windowMs 500; totals ${aggregated[0].total} and ${aggregated[1].total}`,
        'both totals 2,000',
        aggregated.every((a) => a.total === 2000),
      ),
    ],
    perCall: t,
    queued,
    fileSpool: files,
    drain: drains,
    aggregation: aggregated,
  };
}
