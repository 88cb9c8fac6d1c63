import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { account, CALLS, CREDITS, charged, DEFAULT_COST, PRICE, useServices } from './support.js';

// The built package, as an application loads it (npm test builds it first): billing-sdk/ai is a
// bundle of its own, with its own copy of the client class, and the application's BillingClient
// comes from billing-sdk. The meter must make its holds and tracker from that client all the same.
const sdk = await import('../../dist/index.js');
const ai = await import('../../dist/ai/index.js');

const s = useServices();
const client = () => new OpenAI({ apiKey: 'sk-fake', baseURL: `${s.provider.origin}/v1`, maxRetries: 0 });
const ask = { model: 'gpt-fake', messages: [{ role: 'user' as const, content: 'Hello there' }] };

describe('billing-sdk/ai with a BillingClient of billing-sdk (the built package)', () => {
  const billing = () =>
    new sdk.BillingClient({ apiKey: s.mock.apiKey, baseUrl: s.mock.baseUrl, logLevel: 'off' });

  it("'hold' with the meter's own holds: a streamed call is charged, one over the balance refused before the provider", async () => {
    const acct = await account(s.mock, 100);
    const meter = ai.createAIMeter({
      billing: billing(),
      ...CREDITS,
      price: PRICE,
      charge: 'hold',
      maxQuantity: 50,
    });
    const openai = meter.openai(client(), { account_ref_id: acct });
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ ...ask, stream: true }))
      text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);

    const poor = await account(s.mock, 10);
    const refused = meter.openai(client(), { account_ref_id: poor }).chat.completions.create(ask);
    await expect(refused).rejects.toBeInstanceOf(sdk.InsufficientCreditsError);
    expect(s.provider.count()).toBe(1);
    await meter.close();
  });

  it("'track' with the meter's own tracker: the call's usage event is sent", async () => {
    const acct = await account(s.mock);
    const meter = ai.createAIMeter({ billing: billing(), ...CALLS, price: PRICE });
    await meter.openai(client(), { account_ref_id: acct }).chat.completions.create(ask);
    await meter.close();
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
  });
});
