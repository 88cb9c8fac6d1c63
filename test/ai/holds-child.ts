import OpenAI from 'openai';
import { createClient } from 'redis';
import { createAIMeter, InsufficientCreditsError } from '../../src/ai/index.js';
import { BillingClient, createCreditHolds } from '../../src/index.js';
import { type RedisClient, redisHoldStore } from '../../src/redis/index.js';

/**
 * For test/ai/holds.drill.test.ts: one of several processes sharing a redis-server's hold store,
 * making CALLS concurrent streamed OpenAI calls in 'hold' mode for ACCT; prints
 * `{"type":"result", ok, refused, errors}` and exits.
 */
const env = process.env;
const redis = createClient({ url: env.REDIS_URL! });
await redis.connect();
const billing = new BillingClient({ apiKey: env.API_KEY!, baseUrl: env.BASE_URL!, logLevel: 'off' });
const errors: string[] = [];
const meter = createAIMeter({
  billing,
  product_code: 'ai-assistant',
  meter_code: 'credits',
  price: { input: 0.5, output: 2 },
  charge: 'hold',
  maxQuantity: 20,
  holds: createCreditHolds(billing, {
    store: redisHoldStore(redis as unknown as RedisClient, { timeoutMs: 10_000 }),
  }),
  onError: (error, context) => errors.push(`${context.kind}: ${error.message}`),
});
const openai = meter.openai(new OpenAI({ apiKey: 'sk-fake', baseURL: `${env.PROVIDER}/v1`, maxRetries: 0 }), {
  account_ref_id: env.ACCT!,
});
let ok = 0;
let refused = 0;
await Promise.all(
  Array.from({ length: Number(env.CALLS) }, async () => {
    try {
      const stream = await openai.chat.completions.create({
        model: 'gpt-fake',
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      for await (const _ of stream);
      ok++;
    } catch (error) {
      if (error instanceof InsufficientCreditsError) refused++;
      else errors.push(String(error));
    }
  }),
);
process.stdout.write(`${JSON.stringify({ type: 'result', ok, refused, errors, stats: meter.stats() })}\n`);
await redis.quit();
process.exit(0);
