import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import { type Context, Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createAccessCache, createCreditHolds, createGate, type GateAllowed } from '../../src/index.js';
import { until } from '../helpers.js';
import { account, CREDITS, charged, DEFAULT_COST, meterFor, useServices } from './support.js';

const s = useServices();
type Env = { Variables: { billing: GateAllowed } };

/** A Hono app whose `POST /chat` streams `streamText` to the client, gated by a credits hold of `quantity`. */
function chatApp(quantity: number, maxQuantity = 50) {
  const holds = createCreditHolds(s.billing);
  const gate = createGate<Request>({
    billing: s.billing,
    access: createAccessCache(s.billing),
    account: (request) => request.headers.get('x-account') ?? undefined,
    holds,
  });
  const meter = meterFor(s.billing, 'hold', { maxQuantity });
  const model = createOpenAI({ apiKey: 'sk-fake', baseURL: `${s.provider.origin}/v1` }).chat('gpt-fake');
  const app = new Hono<Env>();
  app.post('/chat', gate.hono({ credits: { ...CREDITS, quantity, hold: true } }), (c: Context<Env>) => {
    const decision = c.get('billing');
    const m = meter.model(model, { account_ref_id: decision.account_ref_id, hold: decision.hold });
    return streamText({ model: m, prompt: 'Hi', maxRetries: 0, onError: () => {} }).toTextStreamResponse();
  });
  return { app, holds, meter };
}

describe('meter under a gated route (hold: decision.hold)', () => {
  it('a streamed answer is settled once its body was sent: what the stream used', async () => {
    const acct = await account(s.mock);
    const { app, holds } = chatApp(100);
    const res = await app.request('/chat', { method: 'POST', headers: { 'x-account': acct } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('w0 w1 w2 w3 w4 w5 ');
    await until(() => holds.stats().settled === 1);
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
    expect(s.mock.store.balance(acct, CREDITS.product_code, CREDITS.meter_code)).toBe(1000 - DEFAULT_COST);
  });

  it('a call that could pass the route’s hold is refused before the provider', async () => {
    const acct = await account(s.mock);
    const { app, holds } = chatApp(10, 50);
    const res = await app.request('/chat', { method: 'POST', headers: { 'x-account': acct } });
    // streamText answers at once; the refusal ends its stream with nothing in it.
    expect(await res.text()).toBe('');
    expect(s.provider.count()).toBe(0);
    await until(() => holds.stats().open === 0);
    expect(charged(s.mock, acct).total).toBe(0);
  });

  it('a client that leaves mid-stream is charged what it was sent, not nothing', async () => {
    const acct = await account(s.mock);
    const { app, holds } = chatApp(100);
    s.provider.slow(10);
    const res = await app.request('/chat', { method: 'POST', headers: { 'x-account': acct } });
    const reader = res.body!.getReader();
    let text = '';
    while (text.length < 6) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    await until(() => holds.stats().open === 0);
    const total = charged(s.mock, acct).total;
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThan(DEFAULT_COST);
  });
});
