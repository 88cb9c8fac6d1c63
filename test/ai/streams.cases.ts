import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { account, charged, DEFAULT_COST, meterFor, openaiOn, useServices } from './support.js';

const s = useServices();
const openaiClient = () => openaiOn(s);
const anthropicClient = () => new Anthropic({ apiKey: 'sk-fake', baseURL: s.provider.origin, maxRetries: 0 });
// 'user' and 'Hello there': 15 characters, estimated 4 tokens (2 credits at 0.5).
const ask = {
  model: 'gpt-fake',
  messages: [{ role: 'user' as const, content: 'Hello there' }],
  stream: true as const,
};

describe('a stream cancelled or cut is charged what it delivered', () => {
  it('a consumer that breaks out of a chat stream: an estimate from the text it had, flagged', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    const stream = await openai.chat.completions.create(ask);
    let seen = 0;
    for await (const _ of stream) if (++seen === 3) break; // the role chunk, then 'w0 ', 'w1 '
    const c = charged(s.mock, acct);
    // 4 input tokens estimated (2) + 'w0 w1 ' = 6 characters, 2 tokens (4).
    expect(c.total).toBe(6);
    expect(c.metadata[0]).toMatchObject({ estimated: true, output_tokens: 2 });
    expect(meter.stats()).toMatchObject({ estimated: 1, charged: 1 });
  });

  it('a consumer that breaks at finish_reason: the usage chunk that follows is still read, no estimate', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    for (const stream_options of [undefined, { include_usage: true }]) {
      let text = '';
      for await (const chunk of await openai.chat.completions.create({ ...ask, stream_options })) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.choices[0]?.finish_reason) break;
      }
      expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
    }
    const c = charged(s.mock, acct);
    expect(c.total).toBe(2 * DEFAULT_COST);
    expect(c.metadata).not.toContainEqual(expect.objectContaining({ estimated: true }));
  });

  it("throw() on the stream's iterator, as on the client's own: rejects with the error, the call charged", async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    const it = (await openai.chat.completions.create(ask))[Symbol.asyncIterator]();
    await it.next();
    await it.next(); // 'w0 '
    const stop = new Error('consumer stopped');
    await expect(it.throw?.(stop)).rejects.toBe(stop);
    expect(await it.next()).toMatchObject({ done: true });
    // 4 input tokens estimated (2) + 'w0 ' 1 token (2).
    expect(charged(s.mock, acct).total).toBe(4);
  });

  it('an AbortSignal aborted mid-stream: charged the estimate, never 0 with text delivered', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'hold');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    s.provider.slow(5);
    const abort = new AbortController();
    const stream = await openai.chat.completions.create(ask, { signal: abort.signal });
    let text = '';
    const reading = (async () => {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (text.length >= 3) abort.abort();
      }
    })();
    // The client ends an aborted stream quietly.
    await reading;
    await meter.close();
    const c = charged(s.mock, acct);
    expect(text).toBe('w0 ');
    expect(c.total).toBe(4); // 2 (input estimate) + 1 token of output (2)
    // The hold's rest is back: 1000 - 4.
    expect(s.mock.store.balance(acct, 'ai-assistant', 'credits')).toBe(996);
  });

  it('a stream cut midway by the provider: the text delivered is charged', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    s.provider.cutAfter(4); // the role chunk, 'w0 ', 'w1 ', 'w2 '
    const stream = await openai.chat.completions.create(ask);
    let text = '';
    await expect(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    ).rejects.toThrow();
    expect(text).toBe('w0 w1 w2 ');
    expect(charged(s.mock, acct).total).toBe(2 + 3 * 2);
  });

  it('a stream that failed before any token costs nothing', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'hold');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    s.provider.cutAfter(1); // the role chunk only
    const stream = await openai.chat.completions.create(ask);
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toThrow();
    expect(charged(s.mock, acct).total).toBe(0);
    expect(s.mock.store.balance(acct, 'ai-assistant', 'credits')).toBe(1000);
    expect(meter.stats()).toMatchObject({ failed: 1 });
  });

  it('Anthropic cancelled after message_start: its reported input, the output raised to the text delivered', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const claude = meter.anthropic(anthropicClient(), { account_ref_id: acct });
    const stream = await claude.messages.create({
      model: 'claude-fake',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    let text = '';
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (text.length >= 6) break;
    }
    // 12 input tokens reported (6) + 'w0 w1 ' estimated 2 tokens over the 1 reported (4).
    expect(charged(s.mock, acct)).toMatchObject({ total: 10 });
    expect(charged(s.mock, acct).metadata[0]).toMatchObject({
      input_tokens: 12,
      output_tokens: 2,
      estimated: true,
    });
  });

  it('an estimate never passes the hold', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'hold', { maxQuantity: 3 });
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    const stream = await openai.chat.completions.create(ask);
    let seen = 0;
    for await (const _ of stream) if (++seen === 5) break;
    expect(charged(s.mock, acct).total).toBe(3);
  });

  it('a stream read to its end is charged the provider’s usage, not an estimate', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const claude = meter.anthropic(anthropicClient(), { account_ref_id: acct });
    const stream = claude.messages.stream({
      model: 'claude-fake',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const message = await stream.finalMessage();
    expect(message.usage.output_tokens).toBe(6);
    await meter.close();
    expect(charged(s.mock, acct)).toMatchObject({ total: DEFAULT_COST });
    expect(charged(s.mock, acct).metadata[0]).not.toHaveProperty('estimated');
  });
});

describe('a whole answer without a usage report is charged an estimate, never 0', () => {
  it('chat, responses and messages: the prompt and the answer estimated, flagged', async () => {
    const acct = await account(s.mock);
    s.provider.set({ noUsage: true });
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    const chat = await openai.chat.completions.create({ ...ask, stream: false });
    expect(chat.usage).toBeUndefined();
    // 4 input tokens estimated (2) + 'w0 w1 w2 w3 w4 w5 ' 18 characters, 5 tokens (10).
    expect(charged(s.mock, acct).total).toBe(12);
    await openai.responses.create({ model: 'gpt-fake', input: 'Hi' });
    const claude = meter.anthropic(anthropicClient(), { account_ref_id: acct });
    await claude.messages.create({
      model: 'claude-fake',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const c = charged(s.mock, acct);
    expect(c.keys).toHaveLength(3);
    expect(c.total).toBe(12 + 11 + 11); // 'Hi' (and 'user'): 1 or 2 input tokens, 0.5 or 1, rounded up
    for (const m of c.metadata) expect(m).toMatchObject({ estimated: true, output_tokens: 5 });
    expect(meter.stats()).toMatchObject({ estimated: 3 });
  });
});

describe('a prompt carrying an image (base64): the estimate counts its text, not its bytes', () => {
  const image = `data:image/png;base64,${'iVBORw0KGgo'.repeat(4000)}`;
  const withImage = {
    ...ask,
    messages: [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'Describe this' },
          { type: 'image_url' as const, image_url: { url: image } },
        ],
      },
    ],
  };

  it('a cancelled stream is charged what it used, not 11,000 tokens of base64', async () => {
    const acct = await account(s.mock, 100_000);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    let seen = 0;
    for await (const _ of await openai.chat.completions.create(withImage)) if (++seen === 3) break;
    expect(charged(s.mock, acct).total).toBeLessThan(20);
  });

  it("'hold': the call's bound is not inflated by the image's bytes into a refusal", async () => {
    const acct = await account(s.mock, 1000);
    const meter = meterFor(s.billing, 'hold', { maxQuantity: undefined });
    const openai = meter.openai(openaiClient(), { account_ref_id: acct });
    const stream = await openai.chat.completions.create({ ...withImage, max_completion_tokens: 100 });
    for await (const _ of stream);
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
  });
});
