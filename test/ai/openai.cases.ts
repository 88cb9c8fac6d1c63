import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { InsufficientCreditsError } from '../../src/ai/index.js';
import { InvalidRequestError } from '../../src/index.js';
import { until } from '../helpers.js';
import { account, CREDITS, charged, DEFAULT_COST, MODES, meterFor, useServices } from './support.js';

const s = useServices();
const client = (maxRetries = 0) =>
  new OpenAI({ apiKey: 'sk-fake', baseURL: `${s.provider.origin}/v1`, maxRetries });
const ask = { model: 'gpt-fake', messages: [{ role: 'user' as const, content: 'Hello there' }] };

describe('meter.openai', () => {
  describe.each(MODES)("in '%s' mode", (mode) => {
    it('chat.completions.create: the ledger holds the priced tokens, once, with the model and counts', async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const openai = meter.openai(client(), { account_ref_id: acct });
      const answer = await openai.chat.completions.create(ask);
      expect(answer.choices[0]?.message.content).toBe('w0 w1 w2 w3 w4 w5 ');
      await meter.close();
      const c = charged(s.mock, acct);
      expect(c.total).toBe(DEFAULT_COST);
      expect(c.keys).toHaveLength(1);
      if (mode !== 'hold') {
        expect(c.keys[0]).toMatch(/^ai_[0-9a-f-]{36}$/);
        expect(c.metadata[0]).toMatchObject({ model: 'gpt-fake', input_tokens: 12, output_tokens: 6 });
        expect(JSON.stringify(c.metadata[0])).not.toMatch(/Hello|w0/);
      }
    });

    it('chat streamed: the usage chunk the meter asked for is hidden; charged once the stream ended', async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const openai = meter.openai(client(), { account_ref_id: acct });
      const stream = await openai.chat.completions.create({ ...ask, stream: true });
      let text = '';
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        // What a consumer unaware of the usage chunk does: it never sees `choices: []`.
        text += chunk.choices[0]!.delta.content ?? '';
      }
      expect(text).toBe('w0 w1 w2 w3 w4 w5 ');
      expect(chunks).toBe(8);
      expect(s.provider.bodies[0]).toMatchObject({ stream_options: { include_usage: true } });
      await meter.close();
      expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
    });

    it('responses.create, streamed and not, incomplete included', async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const openai = meter.openai(client(), { account_ref_id: acct });
      const whole = await openai.responses.create({ model: 'gpt-fake', input: 'Hi' });
      expect(whole.output_text).toBe('w0 w1 w2 w3 w4 w5 ');
      const stream = await openai.responses.create({
        model: 'gpt-fake',
        input: 'Hi',
        stream: true,
        max_output_tokens: 3,
      });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types.at(-1)).toBe('response.incomplete');
      await meter.close();
      // 18 for the whole answer; 6 + 3 × 2 = 12 for the one stopped at 3 tokens.
      expect(charged(s.mock, acct).total).toBe(DEFAULT_COST + 12);
    });

    it("the client's own retry after a 500 is one call, charged once", async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const openai = meter.openai(client(2), { account_ref_id: acct });
      s.provider.failOnce(500);
      await openai.chat.completions.create(ask);
      expect(s.provider.count()).toBe(2);
      await meter.close();
      expect(charged(s.mock, acct)).toMatchObject({ total: DEFAULT_COST });
      expect(charged(s.mock, acct).keys).toHaveLength(1);
    });

    it('a provider error charges nothing', async () => {
      const acct = await account(s.mock);
      const meter = meterFor(s.billing, mode);
      const openai = meter.openai(client(0), { account_ref_id: acct });
      s.provider.failOnce(500);
      await expect(openai.chat.completions.create(ask)).rejects.toMatchObject({ status: 500 });
      await meter.close();
      expect(charged(s.mock, acct).total).toBe(0);
      expect(meter.stats()).toMatchObject({ failed: 1, charged: 0 });
    });
  });

  it("the client's helpers that make these calls are charged: chat.completions.stream, parse and runTools, responses.stream and parse", async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(client(), { account_ref_id: acct });
    const chat = openai.chat.completions.stream(ask);
    let chunks = 0;
    chat.on('chunk', (chunk) => {
      chunks++;
      expect(chunk.choices[0]).toBeDefined(); // the usage chunk the meter asked for stays hidden
    });
    expect(await chat.finalContent()).toBe('w0 w1 w2 w3 w4 w5 ');
    expect(chunks).toBe(8);
    const parsed = await openai.chat.completions.parse(ask);
    expect(parsed.choices[0]?.message.content).toBe('w0 w1 w2 w3 w4 w5 ');
    expect(parsed._request_id).toBe('req_2');
    const streamed = openai.responses.stream({ model: 'gpt-fake', input: 'Hi' });
    expect((await streamed.finalResponse()).output_text).toBe('w0 w1 w2 w3 w4 w5 ');
    const response = await openai.responses.parse({ model: 'gpt-fake', input: 'Hi' });
    expect(response.output_text).toBe('w0 w1 w2 w3 w4 w5 ');
    // A tool loop of two calls: the tool's call, then the answer.
    const runner = openai.chat.completions.runTools({
      ...ask,
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            description: 'The weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
            function: (args: { city: string }) => `Sunny in ${args.city}`,
            parse: (input: string) => JSON.parse(input) as { city: string },
          },
        },
      ],
    });
    expect(await runner.finalContent()).toBe('w0 w1 w2 w3 w4 w5 ');
    const c = charged(s.mock, acct);
    expect(c.total).toBe(6 * DEFAULT_COST);
    expect(new Set(c.keys).size).toBe(6);
  });

  it('chat.completions.stream aborted mid-way: the text delivered is charged, flagged', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(client(), { account_ref_id: acct });
    s.provider.slow(5);
    const chat = openai.chat.completions.stream(ask);
    let text = '';
    chat.on('content', (delta) => {
      text += delta;
      if (text.length >= 6) chat.abort();
    });
    await expect(chat.done()).rejects.toThrow(/abort/i);
    await until(() => meter.stats().charged === 1);
    expect(text).toBe('w0 w1 ');
    // 4 input tokens estimated (2) + 'w0 w1 ' 2 tokens (4).
    expect(charged(s.mock, acct)).toMatchObject({
      total: 6,
      metadata: [expect.objectContaining({ estimated: true })],
    });
  });

  it('a background response (its usage comes later, unseen): refused before anything is sent', async () => {
    const acct = await account(s.mock);
    const openai = meterFor(s.billing, 'debit').openai(client(), { account_ref_id: acct });
    const error = await openai.responses
      .create({ model: 'gpt-fake', input: 'Hi', background: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues[0]?.field).toBe('background');
    expect(s.provider.count()).toBe(0);
  });

  it('the caller who asked for the usage chunk gets it', async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'debit');
    const openai = meter.openai(client(), { account_ref_id: acct });
    const stream = await openai.chat.completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    let last: unknown;
    for await (const chunk of stream) last = chunk;
    expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 6 } });
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
  });

  it("'hold' refused: InsufficientCreditsError and the provider saw no request", async () => {
    const acct = await account(s.mock, 50);
    const meter = meterFor(s.billing, 'hold', { maxQuantity: undefined });
    const openai = meter.openai(client(), { account_ref_id: acct });
    const error = await openai.chat.completions
      .create({ ...ask, max_completion_tokens: 100 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientCreditsError);
    // 100 output tokens at 2, plus the prompt's estimated tokens at 0.5.
    expect(error).toMatchObject({ available: 50, ...CREDITS, account_ref_id: acct });
    expect((error as InsufficientCreditsError).required).toBeGreaterThan(200);
    expect(s.provider.count()).toBe(0);
    expect(meter.stats()).toMatchObject({ refused: 1, calls: 0 });
  });

  it("'hold' without a bound: InvalidRequestError before anything is sent", async () => {
    const acct = await account(s.mock);
    const meter = meterFor(s.billing, 'hold', { maxQuantity: undefined });
    const openai = meter.openai(client(), { account_ref_id: acct });
    await expect(openai.chat.completions.create(ask)).rejects.toMatchObject({ name: 'InvalidRequestError' });
    expect(s.provider.count()).toBe(0);
  });

  it('asResponse(): a readable body of the metered answer, whole or streamed, each charged', async () => {
    const acct = await account(s.mock);
    const openai = meterFor(s.billing, 'debit').openai(client(), { account_ref_id: acct });
    const whole = await openai.chat.completions.create(ask).asResponse();
    expect(whole.status).toBe(200);
    expect(whole.headers.get('x-request-id')).toBe('req_1');
    expect(await whole.json()).toMatchObject({ choices: [{ message: { content: 'w0 w1 w2 w3 w4 w5 ' } }] });
    const streamed = await openai.chat.completions.create({ ...ask, stream: true }).asResponse();
    const sse = await streamed.text();
    const chunks = sse.split('\n\n').filter(Boolean);
    expect(chunks).toHaveLength(9); // 8 chunks and [DONE]; the usage chunk the meter asked for hidden
    expect(chunks.at(-1)).toBe('data: [DONE]');
    expect(sse).not.toMatch(/"choices":\[\]/);
    await until(() => charged(s.mock, acct).total === 2 * DEFAULT_COST);
    expect(charged(s.mock, acct).keys).toHaveLength(2);
  });

  it('keeps the rest of the client untouched, and withResponse()', async () => {
    const acct = await account(s.mock);
    const raw = client();
    const openai = meterFor(s.billing, 'debit').openai(raw, { account_ref_id: acct });
    expect(openai.baseURL).toBe(raw.baseURL);
    expect(openai.models).toBe(raw.models);
    const { data, response } = await openai.chat.completions.create(ask).withResponse();
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(response.status).toBe(200);
    expect(charged(s.mock, acct).total).toBe(DEFAULT_COST);
  });
});
