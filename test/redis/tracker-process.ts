// One instance of a service metering usage: createUsageTracker on a redisSpool shared with the other
// instances. Prints {"type":"ready"} once its spool is open; on the line "go" on stdin, tracks COUNT
// events, PARALLEL at a time, each with metadata { child, n } (so the test can tell events apart
// whatever key they are recorded under): even n with a caller key, odd n with a key the tracker
// generates. Prints {"type":"tracked","n","key","quantity"} as each track resolves (stdout to a pipe
// is synchronous: a printed line reached the test even if the process is SIGKILLed right after),
// then {"type":"tracked-all"}. On "close": closes the tracker, prints {"type":"closed","unsent",
// "stats"} and exits.
import { createInterface } from 'node:readline';
import { type RedisClient, redisSpool } from '../../src/redis/index.js';
import { createUsageTracker } from '../../src/tracker/tracker.js';
import { connectFromEnv } from './clients.js';
import { env, inBatches, mockBilling, print } from './print.js';

const child = Number(env('CHILD'));
const count = Number(env('COUNT'));
const parallel = Number(env('PARALLEL'));
const run = env('RUN');
/** Pause between batches: tracking spreads over a couple of seconds, so the test can kill it midway. */
const PACE_MS = 30;

// The client the test asked for (clients.ts): node-redis or ioredis, one node or a cluster.
const redis = await connectFromEnv();

const tracker = createUsageTracker(mockBilling(), {
  spool: redisSpool(redis.client as RedisClient, {
    stream: env('STREAM'),
    consumer: env('CONSUMER'),
    claimIdleMs: Number(env('CLAIM_IDLE_MS')),
  }),
  onDeadLetter: (event, reason) =>
    print({ type: 'dead-letter', key: event.event_key, reason: String(reason.type) }),
});
await tracker.flush(); // opens the spool
print({ type: 'ready' });

async function trackAll(): Promise<void> {
  await inBatches(count, parallel, PACE_MS, async (n) => {
    const quantity = 1 + ((n * 7 + child) % 5);
    const { event_key } = await tracker.track({
      account_ref_id: 'acct_active',
      product_code: 'api-gateway',
      meter_code: 'api_calls',
      quantity,
      metadata: { child, n },
      ...(n % 2 === 0 ? { event_key: `caller-${run}-${child}-${n}` } : {}),
    });
    print({ type: 'tracked', n, key: event_key, quantity });
  });
  print({ type: 'tracked-all' });
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'go') {
    trackAll().catch((error: unknown) => print({ type: 'failed', error: String(error) }));
  } else if (line === 'close') {
    const { unsent } = await tracker.close({ timeoutMs: 20_000 });
    print({ type: 'closed', unsent, stats: { ...tracker.stats() } });
    await redis.close();
    process.exit(0);
  }
}
