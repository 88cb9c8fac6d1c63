// The access cache: a lookup answered from memory vs `billing.accounts.isActive` over loopback (the
// mock in its own process), side by side in tinybench; then a hot path (zipf-distributed lookups at a
// steady rate) whose requests to the service are counted and predicted by ttl arithmetic.
import { BillingClient, createAccessCache } from 'billing-sdk';
import { seededRandom } from 'billing-sdk/testing';
import { goal, r3, sleep, timeTasks } from './lib.mjs';
import { startMockProcess } from './mock-server.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'Access cache';
export const how =
  'The mock in its own process. tinybench, side by side: `access.isActive` on a key held in memory vs `billing.accounts.isActive` over loopback. Hot path: 2,000 lookups/s for 8 s over 300 accounts (zipf, seeded), ttl 1 s; requests counted by a counting `fetch` and predicted from the lookup trace (first lookup asks; then one request per ttl window that sees a lookup, the window starting when the answer arrived).';

const ACCOUNTS = 300;
const RATE = 2000;
const SECONDS = 8;
const TTL_MS = 1000;

/** Account numbers 0..n-1 with P(k) ∝ 1 / (k + 1). */
function zipf(n, random) {
  const cdf = [];
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1);
    cdf.push(total);
  }
  return () => {
    const x = random() * total;
    return Math.max(
      0,
      cdf.findIndex((c) => c >= x),
    );
  };
}

async function hotPath(baseUrl, apiKey) {
  let asked = 0;
  const arrivals = Array.from({ length: ACCOUNTS }, () => []);
  // Counts the requests, and when each account's answer arrived: its ttl runs from then.
  const counting = async (input, init) => {
    asked++;
    const res = await fetch(input, init);
    arrivals[Number(/acct_(\d+)/.exec(String(input.url ?? input))[1])].push(performance.now());
    return res;
  };
  const billing = new BillingClient({ apiKey, baseUrl, fetch: counting });
  const access = createAccessCache(billing, { ttlMs: TTL_MS, staleMs: 60_000 });
  const pick = zipf(ACCOUNTS, seededRandom(34));
  const trace = Array.from({ length: ACCOUNTS }, () => []);
  const pending = [];
  const t0 = performance.now();
  let issued = 0;
  // Every 5 ms tick issues the lookups due since the start: the rate holds without drift.
  while (issued < RATE * SECONDS) {
    const due = Math.min(RATE * SECONDS, Math.floor(((performance.now() - t0) / 1000) * RATE));
    for (; issued < due; issued++) {
      const k = pick();
      trace[k].push(performance.now());
      pending.push(access.isActive({ account_ref_id: `acct_${k}` }));
    }
    await sleep(5);
  }
  const answers = await Promise.all(pending);
  if (!answers.every((a) => a === true)) throw new Error('an active account was answered inactive');
  // One request per account's first lookup, then one per ttl window that sees a lookup (a stale
  // answer is served at once and refreshed behind it); a window runs from the answer's arrival.
  let predicted = 0;
  trace.forEach((times, k) => {
    let validUntil = Number.NEGATIVE_INFINITY;
    for (const t of times) {
      if (t < validUntil) continue;
      predicted++;
      validUntil = (arrivals[k].find((a) => a >= t) ?? t) + TTL_MS;
    }
  });
  return { lookups: issued, asked, predicted, off: r3(((asked - predicted) / predicted) * 100) };
}

/** Runs the scenario: its goals first, then the figures behind them. */
export async function run() {
  const mock = await startMockProcess({ accounts: ACCOUNTS });
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl });
  const access = createAccessCache(billing, { ttlMs: 3_600_000 });
  const params = { account_ref_id: 'acct_1' };
  if ((await billing.accounts.isActive(params)) !== true || (await access.isActive(params)) !== true) {
    throw new Error('acct_1 should be active');
  }
  const tasks = {
    'billing.accounts.isActive (loopback)': () => billing.accounts.isActive(params),
    'access.isActive (memory hit)': () => access.isActive(params),
  };
  const t = await timeTasks(tasks, { time: 2000, warmupTime: 500 });
  const hot = await hotPath(mock.baseUrl, mock.apiKey);
  mock.stop();
  const loop = t['billing.accounts.isActive (loopback)'];
  const hit = t['access.isActive (memory hit)'];
  const ratio = r3(loop.mean / hit.mean);
  return {
    goals: [
      goal(
        'a memory hit vs a loopback request (mean)',
        `${hit.mean} µs vs ${loop.mean} µs: ${ratio}× less`,
        '≥ 100×',
        ratio >= 100,
      ),
      goal('a memory hit, p99', `${hit.p99} µs (p50 ${hit.p50} µs)`, '≤ 50 µs', hit.p99 <= 50),
      goal(
        `hot path: ${hot.lookups} lookups over ${ACCOUNTS} accounts (zipf), ttl ${TTL_MS} ms: requests to the service`,
        `${hot.asked} sent, ${hot.predicted} predicted by ttl arithmetic (${hot.off} % off)`,
        'within ±2 %',
        Math.abs(hot.off) <= 2,
      ),
    ],
    table: t,
    hotPath: hot,
  };
}
