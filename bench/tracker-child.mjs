// One tracker-mode measurement in a fresh process (started by tracker.mjs): billing-sdk's
// `createUsageTracker` from the built package, against the bench server's usage ledger. Each child
// sets the server's latency it needs (0: loopback; or the run's --latency) and writes to an account of
// its own, so the ledger read after is its alone. Usage: node tracker-child.mjs '{"kind":"percall","port":1234,…}'
// Prints one line `BENCH_RESULT {json}`; exits 1 with the error on stderr when a check failed.
//
// Kinds:
//   percall    {blocks, slowCalls, fastCalls, warmupMs}
//              `tracker.track` (memory spool) vs `billing.usage.record` over loopback, alternating blocks,
//              every call timed; the tracker flushed (untimed) after each block; then the heap a queued
//              event holds (run with --expose-gc)
//   throughput {callers, ms, warmupMs, latencyMs}
//              `callers` concurrent loops of `await tracker.track(…)` into fileSpool(a temp dir) for `ms`:
//              events/s, latency of each call, fdatasync calls; then close, reopen, count what is left
//   drain      {mode: many|tracker|tracker-file, events, concurrency, latencyMs}
//              `events` events (quantity i + 1) sent by recordMany, or tracked (memory or file spool)
//              then flushed: wall time
//   aggregate  {windowMs (0: off), events, rate, concurrency, latencyMs}
//              unit events on one meter at a steady rate, then flushed: requests the server received
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { comparePerCall, distribution, ns, steadyRate } from './percall.mjs';
import { benchControl, childMain, METER } from './shared.mjs';
import { billingClient } from './workload-clients.mjs';

/** Sets the server's latency for this child's requests. */
const latency = (t, ms) => benchControl(t.origin, `/__bench/latency?ms=${ms}`);
/** The server's ledger of `account`. */
const ledger = (t, account) => benchControl(t.origin, `/__bench/usage-stats?account=${account}`);
const accountFor = (what) => `acct_tr_${what}_${process.pid}`;

/** A tracker (and its client) from the built package. */
async function tracker(t, options) {
  const { createUsageTracker } = await import('billing-sdk');
  const billing = await billingClient(t);
  const errors = [];
  const dead = [];
  const tr = createUsageTracker(billing, {
    ...options,
    onError: (error) => errors.push(String(error?.message ?? error)),
    onDeadLetter: (event, reason) => dead.push(`${event.event_key}: ${reason.type}`),
  });
  return { billing, tracker: tr, errors, dead };
}

/** Fails when the service refused anything the tracker sent. */
function noDeadLetters(dead) {
  if (dead.length) throw new Error(`${dead.length} events dead-lettered, first ${dead[0]}`);
}

/** @param {import('./shared.mjs').Target} t */
async function percall(o, t) {
  await latency(t, 0);
  const { billing, tracker: tr, dead } = await tracker(t, {});
  const recordEvent = { account_ref_id: accountFor('record'), ...METER, quantity: 1 };
  const trackEvent = { account_ref_id: accountFor('track'), ...METER, quantity: 1 };
  const record = () => billing.usage.record(recordEvent);
  const track = () => tr.track(trackEvent);
  const r = await comparePerCall({ slow: record, fast: track, ...o, between: () => tr.flush() });
  await tr.flush();
  // The heap a queued event holds until it is sent: heapUsed after GC, before and after tracking
  // fastCalls events (the loop never yields, so none is sent meanwhile).
  const gc = globalThis.gc;
  gc();
  const h0 = process.memoryUsage().heapUsed;
  for (let i = 0; i < o.fastCalls; i++) await track();
  gc();
  const queuedBytes = (process.memoryUsage().heapUsed - h0) / o.fastCalls;
  await tr.flush();
  noDeadLetters(dead);
  const tracked = await ledger(t, trackEvent.account_ref_id);
  const stats = tr.stats();
  if (tracked.distinctKeys !== stats.recorded)
    throw new Error(`recorded ${stats.recorded}, server ${tracked.distinctKeys}`);
  return { ...r, recorded: stats.recorded, queuedBytes };
}

/** Counts `FileHandle#datasync` calls in this process (the file spool's group commits). */
async function countDatasyncs(dir) {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe);
  await probe.close();
  await rm(join(dir, 'probe'));
  const original = proto.datasync;
  const counter = { calls: 0 };
  proto.datasync = function datasync(...args) {
    counter.calls++;
    return original.apply(this, args);
  };
  return counter;
}

/** @param {import('./shared.mjs').Target} t */
async function throughput(o, t) {
  await latency(t, o.latencyMs);
  const { fileSpool } = await import('billing-sdk/node');
  const dir = await mkdtemp(join(tmpdir(), 'billing-bench-spool-'));
  try {
    const syncs = await countDatasyncs(dir);
    // maxQueued above what the run tracks: the spool's throughput is measured, not the service's pace
    // (the sender keeps going in the background at 8 requests in flight, as the default).
    const { tracker: tr, dead } = await tracker(t, { spool: fileSpool(dir), maxQueued: 10_000_000 });
    const event = { account_ref_id: accountFor('file'), ...METER, quantity: 1 };
    const latencies = new Float64Array(4_000_000);
    let timing = false;
    let stop = false;
    let timed = 0;
    let total = 0;
    const loop = async () => {
      while (!stop) {
        const t0 = ns();
        await tr.track(event);
        total++;
        if (timing) latencies[timed++] = Number(ns() - t0);
      }
    };
    const loops = Array.from({ length: o.callers }, loop);
    await new Promise((r) => setTimeout(r, o.warmupMs));
    const syncs0 = syncs.calls;
    const t0 = performance.now();
    timing = true;
    await new Promise((r) => setTimeout(r, o.ms));
    timing = false;
    const elapsedMs = performance.now() - t0;
    const commits = syncs.calls - syncs0;
    stop = true;
    await Promise.all(loops);
    const { unsent } = await tr.close({ timeoutMs: 0 });
    noDeadLetters(dead);
    // Durability: what the server did not record is in the spool's file, read back by a new spool.
    const reopened = fileSpool(dir);
    await reopened.open();
    const left = (await reopened.take(10_000_000)).length;
    await reopened.close();
    const server = await ledger(t, event.account_ref_id);
    return {
      callers: o.callers,
      elapsedMs,
      tracked: timed,
      eventsPerSec: timed / (elapsedMs / 1000),
      latency: distribution(latencies, timed),
      commits,
      total,
      unsent,
      left,
      serverRecorded: server.distinctKeys,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** @param {import('./shared.mjs').Target} t */
async function drain(o, t) {
  await latency(t, o.latencyMs);
  const account = accountFor(`drain_${o.mode}`);
  const list = Array.from({ length: o.events }, (_, i) => ({
    account_ref_id: account,
    ...METER,
    quantity: i + 1,
  }));
  const dir = o.mode === 'tracker-file' ? await mkdtemp(join(tmpdir(), 'billing-bench-spool-')) : undefined;
  const spool = dir ? (await import('billing-sdk/node')).fileSpool(dir) : undefined;
  const { billing, tracker: tr, dead } = await tracker(t, { concurrency: o.concurrency, spool });
  // Untimed warm-up on another account: the connections, the JIT of the call path.
  const warm = { account_ref_id: accountFor('warm'), ...METER, quantity: 1 };
  await Promise.all(Array.from({ length: o.concurrency }, () => billing.usage.record(warm)));
  await Promise.all(Array.from({ length: o.concurrency }, () => tr.track(warm)));
  await tr.flush();
  let failed = 0;
  const t0 = performance.now();
  if (o.mode !== 'many') {
    for (const e of list) await tr.track(e);
    await tr.flush();
  } else {
    const results = await billing.usage.recordMany(list, { concurrency: o.concurrency });
    failed = results.filter((r) => !r.ok).length;
  }
  const ms = performance.now() - t0;
  await tr.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  noDeadLetters(dead);
  const server = await ledger(t, account);
  return { mode: o.mode, events: o.events, concurrency: o.concurrency, ms, failed, server };
}

/** @param {import('./shared.mjs').Target} t */
async function aggregate(o, t) {
  await latency(t, o.latencyMs);
  const account = accountFor(`aggregate_${o.windowMs}`);
  const options = {
    concurrency: o.concurrency,
    ...(o.windowMs ? { aggregate: { windowMs: o.windowMs } } : {}),
  };
  const { tracker: tr, dead } = await tracker(t, options);
  const event = { account_ref_id: account, ...METER, quantity: 1 };
  const tracks = [];
  const t0 = performance.now();
  await steadyRate({
    rate: o.rate,
    durationMs: (o.events / o.rate) * 1000,
    tickMs: 10,
    issue: () => tracks.push(tr.track(event)),
  });
  await Promise.all(tracks);
  const trackedMs = performance.now() - t0;
  await tr.flush();
  const ms = performance.now() - t0;
  noDeadLetters(dead);
  const server = await ledger(t, account);
  return { windowMs: o.windowMs, events: tracks.length, trackedMs, ms, stats: tr.stats(), server };
}

childMain({ percall, throughput, drain, aggregate });
