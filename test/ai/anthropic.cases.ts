import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { account, CREDITS, charged, DEFAULT_COST, MODES, meterFor, useServices } from './support.js';

const s = useServices();
const client = (maxRetries = 0) =>
  new Anthropic({ apiKey: 'sk-fake', baseURL: s.provider.origin, maxRetries });
const ask = { model: 'claude-fake', max_tokens: 50, messages: [{ role: 'user' as const, content: 'Hi' }] };

describe('meter.anthropic', () => {
  describe.each(MODES)("in '%s' mode", (mode) => {
    it('messages.create, whole and streamed, and messages.stream: the priced tokens, once each', async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const claude = meter.anthropic(client(), { account_ref_id: acct });
      const message = await claude.messages.create(ask);
      expect(message.content[0]).toMatchObject({ type: 'text', text: 'w0 w1 w2 w3 w4 w5 ' });
      const stream = await claude.messages.create({ ...ask, stream: true });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types.at(-1)).toBe('message_stop');
      const helper = claude.messages.stream(ask);
      expect(await helper.finalText()).toBe('w0 w1 w2 w3 w4 w5 ');
      await meter.close();
      const c = charged(s.mock, acct);
      expect(c.total).toBe(3 * DEFAULT_COST);
      expect(new Set(c.keys).size).toBe(3);
    });

    it("the client's own retry after a 500: one charge", async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const claude = meter.anthropic(client(2), { account_ref_id: acct });
      s.provider.failOnce(500);
      await claude.messages.create(ask);
      expect(s.provider.count()).toBe(2);
      await meter.close();
      expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
    });
  });

  it('prices cache reads and cache creation apart', async () => {
    const acct = await account(s.mock);
    s.provider.set({ input: 100, cached: 60, cacheWrite: 20 });
    const meter = meterFor(s.billing, 'debit', {
      price: { input: 0.5, output: 2, cachedInput: 0.05, cacheWrite: 1 },
    });
    const claude = meter.anthropic(client(), { account_ref_id: acct });
    await claude.messages.create(ask);
    // 20 plain × 0.5 + 60 read × 0.05 + 20 written × 1 + 6 out × 2 = 10 + 3 + 20 + 12.
    const c = charged(s.mock, acct);
    expect(c.total).toBe(45);
    expect(c.metadata[0]).toMatchObject({
      input_tokens: 100,
      cached_input_tokens: 60,
      cache_write_tokens: 20,
    });
  });

  it('streamed with the cache, left after message_delta before message_stop: the usage reported, cache priced apart', async () => {
    const acct = await account(s.mock);
    s.provider.set({ input: 100, cached: 60, cacheWrite: 20 });
    const meter = meterFor(s.billing, 'debit', {
      price: { input: 0.5, output: 2, cachedInput: 0.05, cacheWrite: 1 },
    });
    const claude = meter.anthropic(client(), { account_ref_id: acct });
    for await (const event of await claude.messages.create({ ...ask, stream: true }))
      if (event.type === 'message_delta') break;
    // 20 plain × 0.5 + 60 read × 0.05 + 20 written × 1 + 6 out × 2, from message_start and message_delta.
    const c = charged(s.mock, acct);
    expect(c.total).toBe(45);
    expect(c.metadata[0]).toMatchObject({ input_tokens: 100, cached_input_tokens: 60, output_tokens: 6 });
    expect(c.metadata[0]).not.toHaveProperty('estimated');
  });

  it("'hold': the max_tokens bound is reserved, the provider never called when refused", async () => {
    const acct = await account(s.mock, 200);
    const meter = meterFor(s.billing, 'hold', { maxQuantity: undefined });
    const claude = meter.anthropic(client(), { account_ref_id: acct });
    await expect(claude.messages.create({ ...ask, max_tokens: 4096 })).rejects.toMatchObject({
      name: 'InsufficientCreditsError',
      available: 200,
      ...CREDITS,
    });
    expect(s.provider.count()).toBe(0);
    // 50 tokens at 2 and the prompt's estimated 2 tokens at 0.5: 101 held, 18 settled.
    await claude.messages.create(ask);
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
    expect(s.mock.store.balance(acct, CREDITS.product_code, CREDITS.meter_code)).toBe(200 - DEFAULT_COST);
  });
});

describe('meter.anthropic: a client that throws before sending', () => {
  it("'hold': a create that throws synchronously (a non-streamed max_tokens too large) frees its hold", async () => {
    // 250 credits: the first call's 200 held must come back, or the second cannot be held.
    const acct = await account(s.mock, 250);
    const meter = meterFor(s.billing, 'hold');
    const claude = meter.anthropic(client(), { account_ref_id: acct });
    await expect(claude.messages.create({ ...ask, max_tokens: 100_000 })).rejects.toThrow(
      /Streaming is required/,
    );
    expect(s.provider.count()).toBe(0);
    expect(meter.stats()).toMatchObject({ failed: 1, charged: 0 });
    await claude.messages.create(ask);
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
    expect(s.mock.store.balance(acct, CREDITS.product_code, CREDITS.meter_code)).toBe(250 - DEFAULT_COST);
  });
});

describe('meter.anthropic: the beta messages', () => {
  it('beta.messages.create and beta.messages.stream are charged as messages are', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const claude = meter.anthropic(client(), { account_ref_id: acct });
    const message = await claude.beta.messages.create(ask);
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'w0 w1 w2 w3 w4 w5 ' });
    expect(await claude.beta.messages.stream(ask).finalText()).toBe('w0 w1 w2 w3 w4 w5 ');
    const c = charged(s.mock, acct);
    expect(c.total).toBe(2 * DEFAULT_COST);
    expect(new Set(c.keys).size).toBe(2);
  });
});
