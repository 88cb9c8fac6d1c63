// Sustained `track()` throughput and latency of createUsageTracker + fileSpool (group commit).
//
//   npm run build && node bench/file-spool.mjs [closed|open] [events] [producers|rate] [dir]
//
// The mock service never answers (each send hangs), so what is measured is track's own path:
// checking the event, the spool append (write + fdatasync shared by every append waiting at one
// moment) and the tracker's bookkeeping; the 8 sends under way cost nothing.
// - closed (default): `producers` loops (default 256), each awaiting its track before the next.
// - open: `rate` tracks a second (default 20000), started on schedule whatever the latency.
// `dir` (default the OS temp dir) is where the spool lives: put it on the disk you care about.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BillingClient, createUsageTracker } from 'billing-sdk';
import { fileSpool } from 'billing-sdk/node';
import { startMockServer } from 'billing-sdk/testing';

const [mode = 'closed', eventsArg = '200000', knob, root = tmpdir()] = process.argv.slice(2);
const events = Number(eventsArg);
const server = await startMockServer();
server.faults.add({ method: 'POST', path: '/api/usage/events/', delayMs: 600_000, times: Infinity });
const dir = mkdtempSync(join(root, 'billing-sdk-file-spool-bench-'));
const billing = new BillingClient({ baseUrl: server.baseUrl, apiKey: server.apiKey, logLevel: 'error' });
const tracker = createUsageTracker(billing, { spool: fileSpool(dir), maxQueued: events * 2 });
const meter = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
await tracker.track({ ...meter, quantity: 1 }); // opens the spool

const latency = new Float64Array(events);
const timed = (n) => {
  const start = performance.now();
  return tracker.track({ ...meter, quantity: 1 }).then(() => {
    latency[n] = performance.now() - start;
  });
};
const t0 = performance.now();
let label;
if (mode === 'open') {
  const rate = Number(knob ?? 20_000);
  label = `open loop at ${rate}/s`;
  const pending = [];
  for (let n = 0; n < events; ) {
    const due = Math.min(events, Math.floor(((performance.now() - t0) / 1000) * rate));
    while (n < due) pending.push(timed(n++));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
} else {
  const producers = Number(knob ?? 256);
  label = `closed loop, ${producers} producers`;
  let next = 0;
  await Promise.all(
    Array.from({ length: producers }, async () => {
      for (let n = next++; n < events; n = next++) await timed(n);
    }),
  );
}
const seconds = (performance.now() - t0) / 1000;
latency.sort();
const at = (q) => latency[Math.min(events - 1, Math.floor(events * q))].toFixed(2);
console.log(
  `fileSpool track, ${label}: ${events} events in ${seconds.toFixed(2)} s = ${Math.round(events / seconds)} events/s; ` +
    `latency p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${latency[events - 1].toFixed(1)} ms`,
);
await tracker.close({ timeoutMs: 0 });
await server.close();
rmSync(dir, { recursive: true, force: true });
