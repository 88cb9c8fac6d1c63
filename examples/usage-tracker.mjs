// Usage tracking off the request path: track() returns once the event is on disk, a tracker sends
// in the background, and a restart sends what the stopped process left, each event exactly once.
// Run: node examples/usage-tracker.mjs
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BillingClient, createUsageTracker } from 'billing-sdk';
import { fileSpool } from 'billing-sdk/node';
import { startMockServer } from 'billing-sdk/testing';

const METER = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
const EVENTS = { method: 'POST', path: '/api/usage/events/' };

/** `sending: 420 recorded, 580 queued, 3 retries` on one line, redrawn in place on a terminal. */
function progress(tracker, label) {
  const draw = (end) => {
    const { recorded, queued, inFlight, retries } = tracker.stats();
    const line = `${label}: ${recorded} recorded, ${queued + inFlight} queued, ${retries} retries`;
    if (process.stdout.isTTY) process.stdout.write(`\r${line}${end ? '\n' : ''}`);
    else if (end) console.log(line);
  };
  const timer = setInterval(() => draw(false), 100);
  return () => {
    clearInterval(timer);
    draw(true);
  };
}

/** The tracker one process makes at start: a file spool, so what it cannot send survives it. */
function startTracker(billing, dir, options = {}) {
  return createUsageTracker(billing, {
    spool: fileSpool(dir),
    concurrency: 8,
    // A refusal is never retried: keep it somewhere a person will look.
    onDeadLetter: (event, reason) =>
      console.log(
        `dead letter: ${event.product_code}/${event.meter_code} ${reason.type === 'refused' ? reason.result.error_code : reason.error.name}`,
      ),
    onError: () => {}, // transient failures: retried with backoff (a real app would log them)
    ...options,
  });
}

const server = await startMockServer();
const billing = new BillingClient({ apiKey: server.apiKey, baseUrl: server.baseUrl, retryDelay: () => 20 });
const before = (await billing.usage.summary(METER)).total_usage;
const dir = await mkdtemp(join(tmpdir(), 'billing-usage-spool-'));
let tracked = 0;

// First run: a slow service; the process is stopped (SIGTERM) before it could send everything.
server.faults.add({ ...EVENTS, delayMs: 25, times: Number.POSITIVE_INFINITY });
const first = startTracker(billing, dir);
// In a real server, on shutdown:
//   process.once('SIGTERM', async () => { await first.close({ timeoutMs: 10_000 }); process.exit(0); });
const started = Date.now();
for (let batch = 0; batch < 5; batch++) {
  // Concurrent tracks share one write and one fsync of the spool (group commit).
  await Promise.all(
    Array.from({ length: 100 }, (_, i) => first.track({ ...METER, quantity: 1 + ((batch + i) % 3) })),
  );
}
tracked += 500;
const quantities = Array.from({ length: 500 }, (_, n) => 1 + ((Math.floor(n / 100) + (n % 100)) % 3));
console.log(`tracked 500 events in ${Date.now() - started} ms (each on disk before track resolved)`);
const { unsent } = await first.close({ timeoutMs: 200 });
console.log(`first run stopped: ${first.stats().recorded} recorded, ${unsent} left in the spool`);

// Second run, on a flaky link: lost answers and 503s. What the first run left goes first, with its
// keys; an answer lost after the event was recorded is resent and answered idempotent: true.
server.faults.clear();
server.faults.add({ ...EVENTS, probability: 0.05, reset: 'after', times: Number.POSITIVE_INFINITY });
server.faults.add({ ...EVENTS, probability: 0.05, status: 503, times: Number.POSITIVE_INFINITY });
const second = startTracker(billing, dir, { aggregate: { windowMs: 200 } });
const requestsBefore = server.requests.count(EVENTS);
const done = progress(second, 'second run');
// New usage in this run: 3000 single API calls, summed per window (no metadata, no key of ours).
for (let batch = 0; batch < 30; batch++) {
  await Promise.all(Array.from({ length: 100 }, () => second.track({ ...METER, quantity: 1 })));
}
tracked += 3000;
// One event the service refuses (ai-assistant is prepaid): a dead letter, not a retry loop.
await second.track({ ...METER, product_code: 'ai-assistant', meter_code: 'credits', quantity: 1 });
await second.flush();
done();
const requests = server.requests.count(EVENTS) - requestsBefore;
console.log(
  `second run: sent the ${unsent} left first, then 3000 new events, in ${requests} requests in all`,
);
await second.close();

const added = (await billing.usage.summary(METER)).total_usage - before;
const expected = quantities.reduce((sum, q) => sum + q, 0) + 3000;
console.log(
  `usage added: ${added} (tracked ${expected} in ${tracked} events): ${added === expected ? 'exactly once' : 'MISMATCH'}`,
);
await rm(dir, { recursive: true, force: true });
await server.close();
