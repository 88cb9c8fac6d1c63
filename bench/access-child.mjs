// One access-mode measurement in a fresh process (started by access.mjs): billing-sdk's
// `createAccessCache` from the built package. Usage: node [--expose-gc] access-child.mjs '{"kind":"percall","port":1234,…}'
// Prints one line `BENCH_RESULT {json}`; exits 1 with the error on stderr when a check failed.
//
// Kinds:
//   percall {blocks, slowCalls, fastCalls, warmupMs}
//           `access.isActive` on a warm key vs `billing.accounts.isActive` over loopback, in alternating
//           blocks, every call timed on its own with process.hrtime.bigint()
//   hotpath {seconds, accounts, rate, zipf, invalidateEvery, ttlMs, denyTtlMs, seed}
//           lookups at a steady rate over `accounts` accounts (zipf-distributed), webhooks flipping and
//           invalidating accounts through a real `createWebhookHandler({ access })`; requests counted
//           by the server, and predicted from the lookup trace by ttl arithmetic
//   heap    {entries}  heapUsed after GC before and after filling `entries` answers through an
//           in-memory AccessStore (no network), and the same answers alone in an array (the control)

import { comparePerCall, distribution, ns, prng, steadyRate } from './percall.mjs';
import { ACCESS_PREFIX, benchControl, childMain, sleep, startsActive, statusBody } from './shared.mjs';
import { billingClient } from './workload-clients.mjs';

/** @param {import('./shared.mjs').Target} t */
async function percall(o, t) {
  const { createAccessCache } = await import('billing-sdk');
  const billing = await billingClient(t);
  // A ttl longer than the run: every timed lookup is a memory hit.
  const access = createAccessCache(billing, { ttlMs: 3_600_000 });
  const params = { account_ref_id: `${ACCESS_PREFIX}1` };
  const loopback = () => billing.accounts.isActive(params);
  const hit = () => access.isActive(params);
  if ((await loopback()) !== true || (await hit()) !== true) throw new Error('acct_a1 should be active');
  const r = await comparePerCall({ slow: loopback, fast: hit, ...o });
  const cacheStats = access.stats();
  if (cacheStats.refreshes !== 1)
    throw new Error(`the warm key was asked ${cacheStats.refreshes} times, expected once`);
  return { ...r, cacheStats };
}

/** A sampler of account numbers 0..n-1 with P(k) ∝ 1 / (k + 1)^s (s = 0: uniform). */
function zipfSampler(n, s, random) {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** s;
    cdf[k] = total;
  }
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/**
 * Requests the cache should make for one account, by ttl arithmetic over the trace: the first lookup
 * asks (cold start); an answer then lasts its ttl (`ttlMs` while the account is active, `denyTtlMs`
 * while not) from when it arrived, and the first lookup after it ends asks again (a refresh: one per
 * ttl window that sees a lookup); an invalidation ends the answer at once (the next lookup asks). A
 * lookup that waited for its answer (cold, or after an invalidation) tells when it arrived; a refresh
 * runs behind a stale answer served at once, so its window is counted from the lookup (its request
 * takes about a ms).
 * @param {{t: number, answeredAt: number, kind: 'lookup' | 'invalidate', active: boolean}[]} events  in time order
 */
function predictRequests(events, ttlMs, denyTtlMs) {
  const count = { cold: 0, refresh: 0, afterInvalidation: 0 };
  let validUntil = Number.NEGATIVE_INFINITY;
  let why = 'cold';
  for (const e of events) {
    if (e.kind === 'invalidate') {
      if (why !== 'cold') why = 'afterInvalidation';
      validUntil = Number.NEGATIVE_INFINITY;
    } else if (e.t >= validUntil) {
      count[why]++;
      validUntil = (why === 'refresh' ? e.t : e.answeredAt) + (e.active ? ttlMs : denyTtlMs);
      why = 'refresh';
    }
  }
  return count;
}

/** @param {import('./shared.mjs').Target} t */
async function hotpath(o, t) {
  const { createAccessCache, createWebhookHandler } = await import('billing-sdk');
  const billing = await billingClient(t);
  const access = createAccessCache(billing, { ttlMs: o.ttlMs, denyTtlMs: o.denyTtlMs });
  let delivered = 0;
  const handler = createWebhookHandler({
    access,
    onEvent: () => {
      delivered++;
    },
  });
  const random = prng(o.seed);
  const pick = zipfSampler(o.accounts, o.zipf, random);
  const account = (n) => `${ACCESS_PREFIX}${n}`;
  const active = Array.from({ length: o.accounts }, (_, n) => startsActive(n));
  /** Per account, every lookup and invalidation with its time: what the prediction is computed from. */
  const trace = Array.from({ length: o.accounts }, () => []);
  const latencies = new Float64Array(Math.ceil(o.rate * o.seconds) + 1000);
  const seen = { settled: 0, wrong: 0, errors: 0, firstError: '' };

  const lookup = (i, atMs) => {
    const n = pick();
    trace[n].push({ t: atMs, i, kind: 'lookup', active: active[n] });
    const expected = active[n];
    const t0 = ns();
    access.isActive({ account_ref_id: account(n) }).then(
      (answer) => {
        latencies[i] = Number(ns() - t0);
        seen.settled++;
        // Between a state change and its webhook the cache may still give the old answer: counted.
        if (answer !== expected) seen.wrong++;
      },
      (err) => {
        latencies[i] = Number(ns() - t0);
        seen.settled++;
        seen.errors++;
        seen.firstError ||= String(err?.stack ?? err);
      },
    );
  };

  // A lifecycle change: the account changes state at the server, then its webhook reaches the
  // handler, which invalidates the account before onEvent.
  let webhooks = 0;
  let webhookFailures = 0;
  const webhook = async (n, t0) => {
    active[n] = !active[n];
    await benchControl(t.origin, `/__bench/access-set?account=${account(n)}&active=${active[n] ? 1 : 0}`);
    const event = {
      event: active[n] ? 'payment-succeeded' : 'payment-failed',
      transaction_id: `00000000-0000-4000-8000-${String(webhooks++).padStart(12, '0')}`,
      account_ref_id: account(n),
      subscription_id: `sub_${n}`,
      is_active: active[n],
      label_name: 'pro',
      timestamp: new Date().toISOString(),
    };
    trace[n].push({ t: performance.now() - t0, kind: 'invalidate', active: active[n] });
    const res = await handler(
      new Request('http://app.local/webhooks/billing', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event),
      }),
    );
    if (res.status !== 200) webhookFailures++;
  };

  const requestsBefore = (await benchControl(t.origin, '/__bench/access-stats')).requests;
  const pending = [];
  let nextWebhook = o.invalidateEvery;
  const t0 = performance.now();
  const lookups = await steadyRate({
    rate: o.rate,
    durationMs: o.seconds * 1000,
    tickMs: o.tickMs,
    issue: lookup,
    onTick: (atMs) => {
      for (; nextWebhook <= atMs; nextWebhook += o.invalidateEvery)
        pending.push(webhook(Math.floor(random() * o.accounts), t0));
    },
  });
  await Promise.all(pending);
  while (seen.settled < lookups) await sleep(5);
  const elapsedMs = performance.now() - t0;
  // Refreshes started by the last stale hits may still be on their way.
  await sleep(200);
  const requests = (await benchControl(t.origin, '/__bench/access-stats')).requests - requestsBefore;
  if (seen.errors) throw new Error(`${seen.errors} lookups failed: ${seen.firstError}`);
  if (delivered !== webhooks || webhookFailures) throw new Error(`webhooks: ${webhookFailures} failed`);

  const predicted = { cold: 0, refresh: 0, afterInvalidation: 0 };
  let distinct = 0;
  for (const events of trace) {
    if (!events.some((e) => e.kind === 'lookup')) continue;
    distinct++;
    events.sort((a, b) => a.t - b.t);
    for (const e of events) if (e.kind === 'lookup') e.answeredAt = e.t + latencies[e.i] / 1e6;
    const p = predictRequests(events, o.ttlMs, o.denyTtlMs);
    for (const k of Object.keys(p)) predicted[k] += p[k];
  }
  return {
    lookups,
    elapsedMs,
    requests,
    predicted,
    distinct,
    webhooks,
    wrongAnswers: seen.wrong,
    cacheStats: access.stats(),
    latency: distribution(latencies, lookups),
  };
}

/** @param {import('./shared.mjs').Target} t */
async function heap(o, t) {
  const gc = globalThis.gc;
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  const { createAccessCache } = await import('billing-sdk');
  const billing = await billingClient(t);
  // A shared store that always has a fresh answer: each read hands out a new parse of the account's
  // status, as a response would be. No network: 100k answers in seconds.
  let reads = 0;
  const store = {
    read: async (_key, account) => {
      reads++;
      const status = JSON.parse(statusBody(account, true));
      return {
        answer: { value: { kind: 'status', status }, ageMs: 0, ttlMs: 30_000 },
        generation: '0',
        leased: false,
      };
    },
    write: async () => true,
    release: async () => {},
    invalidate: async () => {},
    watch: () => () => {},
  };
  /** Lookups of accounts from..to-1, 1000 at a time. */
  const fill = async (cache, from, to) => {
    for (let n = from; n < to; n += 1000) {
      const batch = [];
      for (let k = n; k < Math.min(n + 1000, to); k++)
        batch.push(cache.isActive({ account_ref_id: `${ACCESS_PREFIX}${k}` }));
      for (const answer of await Promise.all(batch)) if (answer !== true) throw new Error('expected true');
    }
  };
  // The code paths warmed on 1000 accounts first, in a cache then dropped: the heap before is that
  // of an empty cache.
  const warm = createAccessCache(billing, { maxEntries: o.entries, store });
  await fill(warm, 0, 1000);
  await warm.close();
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  // lru-cache sizes some of its arrays for maxEntries when it is made: counted as the empty cache.
  const cache = createAccessCache(billing, { maxEntries: o.entries, store });
  gc();
  const empty = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  await fill(cache, 0, o.entries);
  const fillMs = performance.now() - t0;
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  const stats = cache.stats();
  if (stats.entries !== o.entries) throw new Error(`${stats.entries} entries held, expected ${o.entries}`);
  await cache.close();
  gc();
  gc();
  // The control: the same answers alone (a fresh parse each), kept in an array.
  const base = process.memoryUsage().heapUsed;
  const alone = [];
  for (let n = 0; n < o.entries; n++) alone.push(JSON.parse(statusBody(`${ACCESS_PREFIX}${n}`, true)));
  gc();
  gc();
  const answersOnly = process.memoryUsage().heapUsed - base;
  if (alone.length !== o.entries) throw new Error('unreachable');
  return { entries: o.entries, before, empty, after, fillMs, reads, answersOnly, cacheStats: stats };
}

childMain({ percall, hotpath, heap });
