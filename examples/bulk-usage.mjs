// Bulk metering: record a day's usage log (2,000 events) with recordMany, a progress bar in the
// terminal, and a resume that records nothing twice.
// Run: node examples/bulk-usage.mjs
import { BillingClient } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';

const METER = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };

/** `[#######-------------] 700/2000` on one line, redrawn in place when stdout is a terminal. */
function progressBar(label) {
  const width = 30;
  let last = -1;
  return ({ done, total }) => {
    const filled = Math.round((done / total) * width);
    if (filled === last && done !== total) return;
    last = filled;
    const line = `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
    if (process.stdout.isTTY) process.stdout.write(`\r${line}${done === total ? '\n' : ''}`);
    else if (done === total) console.log(line);
  };
}

/** Records `lines` (with keys from the log's own line ids), resuming a batch safely if run again. */
export async function recordLog(billing, lines, options = {}) {
  const events = lines.map((line) => ({
    ...METER,
    quantity: line.calls,
    event_key: `log-2026-11-23:${line.id}`,
  }));
  return billing.usage.recordMany(events, {
    concurrency: 16,
    onProgress: progressBar('recording'),
    ...options,
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startMockServer();
  // Flaky on purpose: some answers are lost after the event was recorded, some are 503s.
  const common = { method: 'POST', path: '/api/usage/events/', times: Number.POSITIVE_INFINITY };
  server.faults.add({ ...common, probability: 0.05, reset: 'after' });
  server.faults.add({ ...common, probability: 0.05, status: 503 });
  // Generous retries for a flaky link; what still fails is listed in the results with its key.
  const billing = new BillingClient({
    apiKey: server.apiKey,
    baseUrl: server.baseUrl,
    maxRetries: 6,
    retryDelay: () => 50,
  });
  const before = (await billing.usage.summary(METER)).total_usage;
  const lines = Array.from({ length: 2000 }, (_, i) => ({ id: i, calls: 1 + (i % 3) }));

  // The first run is stopped half way (as a deploy or a crash would).
  const controller = new AbortController();
  const first = await recordLog(billing, lines, {
    signal: controller.signal,
    onProgress: ({ done }) => done === 1000 && controller.abort(),
  });
  console.log(
    `first run: ${first.filter((r) => r.ok).length} recorded, ${first.filter((r) => !r.ok).length} left`,
  );

  // Run again over the whole log: same keys, so what was recorded is not recorded twice.
  const second = await recordLog(billing, lines);
  const replays = second.filter((r) => r.ok && r.result.accepted && r.result.idempotent).length;
  const failed = second.filter((r) => !r.ok);
  for (const r of failed)
    console.log(`not recorded (resubmit later with the same key): ${r.event_key}: ${r.error.message}`);
  const ok = second.length - failed.length;
  console.log(`second run: ${failed.length ? ok : `all ${ok}`} ok, ${replays} were already recorded`);

  const added = (await billing.usage.summary(METER)).total_usage - before;
  const expected = lines.reduce((sum, line) => sum + line.calls, 0);
  console.log(
    `usage added: ${added} (the log holds ${expected}): ${added === expected ? 'exactly once' : 'MISMATCH'}`,
  );
  await server.close();
}
