import OpenAI from 'openai';
import { createAIMeter } from '../../src/ai/index.js';
import { BillingClient, createUsageTracker } from '../../src/index.js';
import { fileSpool } from '../../src/node/index.js';

/**
 * For test/ai/kill.drill.test.ts: one metered OpenAI call in 'track' mode on a file spool, then
 * `{"type":"done"}` on stdout, and it waits to be killed (SIGKILL: nothing closes, nothing flushes).
 */
const env = process.env;
const billing = new BillingClient({ apiKey: env.API_KEY!, baseUrl: env.BASE_URL!, logLevel: 'off' });
const tracker = createUsageTracker(billing, { spool: fileSpool(env.DIR!) });
const meter = createAIMeter({
  billing,
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  price: { input: 0.5, output: 2 },
  tracker,
});
const openai = meter.openai(new OpenAI({ apiKey: 'sk-fake', baseURL: `${env.PROVIDER}/v1`, maxRetries: 0 }), {
  account_ref_id: 'acct_active',
  event_key: env.KEY!,
});
await openai.chat.completions.create({ model: 'gpt-fake', messages: [{ role: 'user', content: 'Hi' }] });
process.stdout.write(`${JSON.stringify({ type: 'done' })}\n`);
setInterval(() => {}, 1000);
