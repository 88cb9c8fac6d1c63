// Run by queued-heap.test.ts, under --expose-gc: the heap a tracker's queue of `COUNT` events costs
// on the memory spool, with the service unreachable (nothing leaves the queue). Prints one JSON line.
import { BillingClient, createUsageTracker } from '../../src/index.js';

const COUNT = Number(process.env.COUNT ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

async function settle(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc?.();
  }
  return process.memoryUsage().heapUsed;
}

// Nothing listens on port 9 of loopback: every send is refused, so the tracker pauses and keeps all.
const billing = new BillingClient({
  apiKey: 'sk_test_heap',
  baseUrl: 'http://127.0.0.1:9/api/',
  maxRetries: 0,
  logLevel: 'off',
});
const tracker = createUsageTracker(billing, { maxQueued: COUNT * 2, onError: () => {} });
// Warm up: the first track opens the spool and the first sends fail, so the loop is paused.
for (let i = 0; i < 10; i++)
  await tracker.track({
    account_ref_id: 'acct_1',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    quantity: 1,
  });
await new Promise((resolve) => setTimeout(resolve, 200));
const before = await settle();
for (let i = 0; i < COUNT; i++) {
  await tracker.track({
    account_ref_id: 'acct_1',
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    quantity: 1,
  });
}
const after = await settle();
const { queued, inFlight } = tracker.stats();
console.log(JSON.stringify({ type: 'heap', perEvent: (after - before) / COUNT, queued: queued + inFlight }));
process.exit(0);
