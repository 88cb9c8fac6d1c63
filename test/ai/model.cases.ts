import { createOpenAI } from '@ai-sdk/openai';
import {
  generateObject,
  generateText,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from 'ai';
import { describe, expect, it } from 'vitest';
import { account, charged, DEFAULT_COST, MODES, meterFor, useServices } from './support.js';

const s = useServices();
const model = () => createOpenAI({ apiKey: 'sk-fake', baseURL: `${s.provider.origin}/v1` }).chat('gpt-fake');

describe('meter.model (AI SDK)', () => {
  describe.each(MODES)("in '%s' mode", (mode) => {
    it('generateText and streamText: the priced tokens, once per call', async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const m = meter.model(model(), { account_ref_id: acct });
      const { text } = await generateText({ model: m, prompt: 'Hi', maxRetries: 0 });
      expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
      const streamed = streamText({ model: m, prompt: 'Hi', maxRetries: 0 });
      let out = '';
      for await (const delta of streamed.textStream) out += delta;
      expect(out).toBe('w0 w1 w2 w3 w4 w5 ');
      await meter.close();
      const c = charged(s.mock, acct);
      expect(c.total).toBe(2 * DEFAULT_COST);
      expect(c.keys).toHaveLength(2);
    });
  });

  it('a tool loop: each step is a call, charged under its own key derived from the one given', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const m = meter.model(model(), { account_ref_id: acct, event_key: 'req-42' });
    const { text, steps } = await generateText({
      model: m,
      prompt: 'Weather in Paris?',
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      tools: {
        weather: tool({
          description: 'The weather of a city',
          inputSchema: jsonSchema<{ city: string }>({
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
          }),
          execute: async ({ city }) => `Sunny in ${city}`,
        }),
      },
    });
    expect(steps).toHaveLength(2);
    expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
    expect(charged(s.mock, acct)).toMatchObject({ total: 2 * DEFAULT_COST, keys: ['req-42', 'req-42_2'] });
  });

  it('generateObject, and the middleware form under wrapLanguageModel', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const m = wrapLanguageModel({ model: model(), middleware: meter.middleware({ account_ref_id: acct }) });
    const { object } = await generateObject({
      model: m,
      prompt: 'Words?',
      maxRetries: 0,
      schema: jsonSchema<{ words: string }>({
        type: 'object',
        properties: { words: { type: 'string' } },
        required: ['words'],
        additionalProperties: false,
      }),
    });
    expect(object.words).toBe('w0 w1 w2 w3 w4 w5 ');
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
  });

  it('streamText aborted by its signal: the text delivered is charged, flagged', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const m = meter.model(model(), { account_ref_id: acct });
    s.provider.slow(5);
    const abort = new AbortController();
    const streamed = streamText({ model: m, prompt: 'Hi', maxRetries: 0, abortSignal: abort.signal });
    let out = '';
    try {
      for await (const delta of streamed.textStream) {
        out += delta;
        if (out.length >= 6) abort.abort();
      }
    } catch {
      // An aborted stream may end with the abort's error.
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(out.length).toBeGreaterThanOrEqual(6);
    const c = charged(s.mock, acct);
    expect(c.total).toBeGreaterThan(0);
    expect(c.total).toBeLessThan(DEFAULT_COST);
    expect(c.metadata[0]).toMatchObject({ estimated: true });
  });

  it('a model error charges nothing', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'hold');
    const m = meter.model(model(), { account_ref_id: acct });
    s.provider.failOnce(400);
    await expect(generateText({ model: m, prompt: 'Hi', maxRetries: 0 })).rejects.toThrow();
    expect(charged(s.mock, acct).total).toBe(0);
    expect(s.mock.store.balance(acct, 'ai-assistant', 'credits')).toBe(1000);
  });
});

describe('meter.model: a model that reports no usage', () => {
  it('generateText: the prompt and the answer estimated, flagged, never 0', async () => {
    const acct = await account(s.mock);
    s.provider.set({ noUsage: true });
    const meter = meterFor(s.billing, 'debit');
    const { text } = await generateText({
      model: meter.model(model(), { account_ref_id: acct }),
      prompt: 'Hi',
      maxRetries: 0,
    });
    expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
    const c = charged(s.mock, acct);
    expect(c.total).toBeGreaterThan(10);
    expect(c.metadata[0]).toMatchObject({ estimated: true, output_tokens: 5 });
  });
});

describe('meter.model: the AI SDK retrying a call', () => {
  it('a call retried after a 500 keeps its key: the retried request is charged once', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const first = meter.model(model(), { account_ref_id: acct, event_key: 'req-7' });
    s.provider.failOnce(500);
    await generateText({ model: first, prompt: 'Hi', maxRetries: 1 });
    expect(s.provider.count()).toBe(2);
    expect(charged(s.mock, acct).keys).toEqual(['req-7']);
    // The client retries the whole request with its Idempotency-Key: the same charge, not a second.
    const again = meter.model(model(), { account_ref_id: acct, event_key: 'req-7' });
    await generateText({ model: again, prompt: 'Hi', maxRetries: 0 });
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
  });
});
