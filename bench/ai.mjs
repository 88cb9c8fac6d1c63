// The AI meter: a metered call vs the same call unwrapped, against a loopback fake provider in this
// process (OpenAI chat completions and Anthropic messages, whole and streamed): the CPU a call adds,
// and the time it adds to the first streamed token. 'track' mode with a tracker that only queues (its
// own cost, the background send, is the tracker scenario's), 'debit' against the mock.
import { createServer } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { BillingClient } from 'billing-sdk';
import { createAIMeter } from 'billing-sdk/ai';
import OpenAI from 'openai';
import { goal, r3, startMock, timeTasks } from './lib.mjs';

/** The section's title and how it measures, for RESULTS.md. */
export const title = 'AI meter';
export const how =
  'The meter’s own cost: tinybench, 1 s per task, a client whose `chat.completions.create` and `messages.create` answer from memory (whole, or a stream of 9 chunks read to the end), and an AI SDK language model (v3) answering from memory (`doGenerate`, `doStream` read to the end; `meter.model`), metered in `track` mode vs unwrapped: the difference of the means. Then a fake provider on loopback in this process answers 6 tokens (streamed: 9 SSE events). tinybench, 1 s per task: `openai.chat.completions.create` and `anthropic.messages.create`, whole and streamed (read to the end), through `meter.openai`/`meter.anthropic` in `track` mode (a tracker that queues in memory and sends nothing: its sending is the tracker scenario) vs the same client unwrapped; the added CPU per call is the difference of `process.cpuUsage` per call. Time to first token: 300 streams each way, from `create()` to the first content chunk, medians. `debit` and `hold` modes (default credit holds, `maxQuantity` 10): the same against the mock in this process.';

const WORDS = ['Hello', ' there', ',', ' how', ' are', ' you'];

function chatEvents(model, includeUsage) {
  const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model };
  const out = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  ];
  for (const w of WORDS)
    out.push({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] });
  out.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  if (includeUsage)
    out.push({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } });
  return out;
}

async function startFake() {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = JSON.parse(Buffer.concat(chunks).toString());
    const model = body.model;
    if (req.url.startsWith('/v1/messages')) {
      const usage = {
        input_tokens: 12,
        output_tokens: 6,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      };
      const message = { id: 'm', type: 'message', role: 'assistant', model, stop_sequence: null };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            ...message,
            content: [{ type: 'text', text: WORDS.join('') }],
            stop_reason: 'end_turn',
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (type, data) =>
        res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send('message_start', {
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      });
      send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      for (const text of WORDS)
        send('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
      send('content_block_stop', { index: 0 });
      send('message_delta', {
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 6 },
      });
      send('message_stop', {});
      res.end();
      return;
    }
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [
            { index: 0, message: { role: 'assistant', content: WORDS.join('') }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const e of chatEvents(model, body.stream_options?.include_usage === true))
      res.write(`data: ${JSON.stringify(e)}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

const ask = { model: 'gpt-bench', messages: [{ role: 'user', content: 'Hello there' }] };
const claudeAsk = {
  model: 'claude-bench',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Hello there' }],
};

async function drain(stream) {
  for await (const _ of stream);
}

/**
 * A client with the OpenAI and Anthropic methods the meter wraps, answering from memory: timing it
 * metered and unwrapped gives what the meter itself adds, free of the network's noise.
 */
function memoryClient() {
  const whole = {
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-bench',
    choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join('') }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
  };
  const message = {
    id: 'm',
    type: 'message',
    role: 'assistant',
    model: 'claude-bench',
    content: [{ type: 'text', text: WORDS.join('') }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 6 },
  };
  const stream = (items) => ({
    controller: new AbortController(),
    async *[Symbol.asyncIterator]() {
      yield* items;
    },
  });
  return {
    chat: {
      completions: {
        create: async (body) =>
          body.stream ? stream(chatEvents(body.model, body.stream_options?.include_usage === true)) : whole,
      },
    },
    messages: { create: async () => message },
  };
}

/** An AI SDK language model (specification v3) answering from memory: `meter.model`'s own cost. */
function memoryModel() {
  const usage = { inputTokens: { total: 12, noCache: 12 }, outputTokens: { total: 6, text: 6 } };
  return {
    specificationVersion: 'v3',
    provider: 'bench',
    modelId: 'model-bench',
    supportedUrls: {},
    doGenerate: async () => ({
      content: [{ type: 'text', text: WORDS.join('') }],
      finishReason: 'stop',
      usage,
      warnings: [],
    }),
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          for (const delta of WORDS) controller.enqueue({ type: 'text-delta', id: 't', delta });
          controller.enqueue({ type: 'finish', finishReason: 'stop', usage });
          controller.close();
        },
      }),
    }),
  };
}

const prompt = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }] };

/** From `create()` to the first chunk with text, in ms: `n` streams, the median. */
async function firstToken(create, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const stream = await create();
    for await (const chunk of stream) {
      const text = chunk.choices?.[0]?.delta?.content ?? chunk.delta?.text;
      if (text) {
        times.push(performance.now() - t0);
        break;
      }
    }
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

export async function run() {
  const fake = await startFake();
  const mock = await startMock({ accounts: 1 });
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl, logLevel: 'off' });
  mock.store.setBalance('acct_0', 'ai-assistant', 'credits', 1e12);
  let queued = 0;
  const tracker = {
    track: async (e) => ({ event_key: e.event_key, n: queued++ }),
    flush: async () => {},
    close: async () => ({ unsent: 0 }),
  };
  const price = { input: 0.001, output: 0.003 };
  const track = createAIMeter({
    billing,
    product_code: 'api-gateway',
    meter_code: 'api_calls',
    price,
    tracker,
  });
  const debit = createAIMeter({
    billing,
    product_code: 'ai-assistant',
    meter_code: 'credits',
    price,
    charge: 'debit',
  });
  const raw = new OpenAI({ apiKey: 'sk-bench', baseURL: `${fake.origin}/v1`, maxRetries: 0 });
  const rawClaude = new Anthropic({ apiKey: 'sk-bench', baseURL: fake.origin, maxRetries: 0 });
  const who = { account_ref_id: 'acct_0' };
  const metered = track.openai(raw, who);
  const meteredClaude = track.anthropic(rawClaude, who);
  const debited = debit.openai(raw, who);
  // 'hold': the most a call may cost reserved (in memory, the balance read once), the tokens settled.
  const hold = createAIMeter({
    billing,
    product_code: 'ai-assistant',
    meter_code: 'credits',
    price,
    charge: 'hold',
    maxQuantity: 10,
  });
  const held = hold.openai(raw, who);

  const memory = memoryClient();
  const memoryMetered = track.openai(memory, who);
  const memoryClaude = track.anthropic(memory, who);
  const model = memoryModel();
  const memoryModelMetered = track.model(model, who);
  const own = await timeTasks(
    {
      'chat, unwrapped': () => memory.chat.completions.create(ask),
      'chat, track': () => memoryMetered.chat.completions.create(ask),
      'chat streamed, unwrapped': async () =>
        drain(await memory.chat.completions.create({ ...ask, stream: true })),
      'chat streamed, track': async () =>
        drain(await memoryMetered.chat.completions.create({ ...ask, stream: true })),
      'messages, unwrapped': () => memory.messages.create(claudeAsk),
      'messages, track': () => memoryClaude.messages.create(claudeAsk),
      'model, unwrapped': () => model.doGenerate(prompt),
      'model, track': () => memoryModelMetered.doGenerate(prompt),
      'model streamed, unwrapped': async () => drain((await model.doStream(prompt)).stream),
      'model streamed, track': async () => drain((await memoryModelMetered.doStream(prompt)).stream),
    },
    { time: 1000, warmupTime: 300 },
  );
  const t = await timeTasks(
    {
      'openai chat, unwrapped': () => raw.chat.completions.create(ask),
      'openai chat, track': () => metered.chat.completions.create(ask),
      'openai chat, debit': () => debited.chat.completions.create(ask),
      'openai chat, hold': () => held.chat.completions.create(ask),
      'openai chat streamed, unwrapped': async () =>
        drain(await raw.chat.completions.create({ ...ask, stream: true })),
      'openai chat streamed, track': async () =>
        drain(await metered.chat.completions.create({ ...ask, stream: true })),
      'anthropic messages, unwrapped': () => rawClaude.messages.create(claudeAsk),
      'anthropic messages, track': () => meteredClaude.messages.create(claudeAsk),
      'anthropic streamed, unwrapped': async () =>
        drain(await rawClaude.messages.create({ ...claudeAsk, stream: true })),
      'anthropic streamed, track': async () =>
        drain(await meteredClaude.messages.create({ ...claudeAsk, stream: true })),
    },
    { time: 1000, warmupTime: 300 },
  );
  const ttft = {
    raw: await firstToken(() => raw.chat.completions.create({ ...ask, stream: true }), 300),
    track: await firstToken(() => metered.chat.completions.create({ ...ask, stream: true }), 300),
  };
  const ttftClaude = {
    raw: await firstToken(() => rawClaude.messages.create({ ...claudeAsk, stream: true }), 300),
    track: await firstToken(() => meteredClaude.messages.create({ ...claudeAsk, stream: true }), 300),
  };
  fake.close();
  await mock.close();

  const added = (way) => r3(own[`${way}, track`].mean - own[`${way}, unwrapped`].mean);
  const ways = ['chat', 'chat streamed', 'messages', 'model', 'model streamed'];
  const cpu = Object.fromEntries(ways.map((w) => [w, added(w)]));
  const worst = Math.max(...Object.values(cpu));
  const loopback = (way) => r3(t[`${way}, track`].cpu - t[`${way}, unwrapped`].cpu);
  const ttftAdded = r3(Math.max(ttft.track - ttft.raw, ttftClaude.track - ttftClaude.raw));
  return {
    goals: [
      goal(
        "added CPU per call in 'track' mode (a client answering from memory: metered minus unwrapped, mean)",
        ways.map((w) => `${w} ${cpu[w]} µs`).join('; '),
        '≤ 50 µs',
        worst <= 50,
      ),
      goal(
        "the same over loopback (process CPU per call, metered minus unwrapped: noisy, within a loaded machine's spread)",
        ['openai chat', 'openai chat streamed', 'anthropic messages', 'anthropic streamed']
          .map((w) => `${w} ${loopback(w)} µs`)
          .join('; '),
        undefined,
        null,
      ),
      goal(
        "added time to the first streamed token in 'track' mode (medians)",
        `openai ${r3(ttft.track)} ms vs ${r3(ttft.raw)} ms; anthropic ${r3(ttftClaude.track)} ms vs ${r3(ttftClaude.raw)} ms`,
        '≤ 1 ms',
        ttftAdded <= 1,
      ),
      goal(
        "'debit' and 'hold' modes: a whole chat call with its debit awaited, or held and settled, vs unwrapped (mean)",
        `debit ${t['openai chat, debit'].mean} µs, hold ${t['openai chat, hold'].mean} µs vs ${t['openai chat, unwrapped'].mean} µs`,
        undefined,
        null,
      ),
    ],
    tasks: t,
    own,
    ttft: { openai: ttft, anthropic: ttftClaude },
    tracked: queued,
  };
}
