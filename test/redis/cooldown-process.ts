// One instance of an application under a 429 storm: a BillingClient with the shared Redis cooldown
// (MODE=redis) or its own in-process one (MODE=memory). Prints {"type":"ready"}, waits for "go" on
// stdin, then runs LOOPS concurrent calls (each retrying through the storm) and prints the outcome.
import { createInterface } from 'node:readline';
import { BillingClient } from '../../src/index.js';
import { type RedisClient, redisCooldown } from '../../src/redis/index.js';
import { connectFromEnv } from './clients.js';
import { print } from './print.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

// The client the test asked for (clients.ts): node-redis or ioredis, one node or a cluster.
const redis = await connectFromEnv();
const redisErrors: string[] = [];
const billing = new BillingClient({
  apiKey: env('API_KEY'),
  baseUrl: env('BASE_URL'),
  logLevel: 'off',
  maxRetries: 30,
  cooldown:
    env('MODE') === 'redis'
      ? redisCooldown(redis.client as RedisClient, {
          prefix: env('PREFIX'),
          onError: (e) => void redisErrors.push(String(e)),
        })
      : undefined,
});

// A first call before the storm, so the storm does not also time module loading and connecting.
await billing.products.list();
print({ type: 'ready' });
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === 'go') break;

const balance = { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' };
const results = await Promise.allSettled(
  Array.from({ length: Number(env('LOOPS')) }, () => billing.usage.balance(balance)),
);
print({
  type: 'finished',
  ok: results.filter((r) => r.status === 'fulfilled').length,
  errors: results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])),
  redisErrors,
});
await redis.close();
process.exit(0);
