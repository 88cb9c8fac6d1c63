// A Hono chat route that streams an LLM's answer and bills its tokens to the account's prepaid
// credits: a whole answer costs what it used, an answer the client leaves midway what was generated
// until then, and an account that cannot pay is answered 402 before the LLM is called.
// Run: node examples/ai-chat-hono.mjs (against the embedded mock and a local stand-in for the LLM:
// no network, no LLM key; needs hono, @hono/node-server and openai).

import { randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import { serve } from '@hono/node-server';
import { BillingClient } from 'billing-sdk';
import { createAIMeter, InsufficientCreditsError } from 'billing-sdk/ai';
import { DEMO, startMockServer } from 'billing-sdk/testing';
import { Hono } from 'hono';
import { streamText } from 'hono/streaming';
import OpenAI from 'openai';

const CREDITS = { product_code: DEMO.products.aiAssistant.product_code, meter_code: DEMO.meters.credits };

/**
 * Builds the app. `account(request)` stands in for your authentication; `onBilled()` is called once
 * an answer was charged (your logs; the run below waits on it).
 */
export function createApp({ meter, openai, account, onBilled }) {
  const app = new Hono();
  app.post('/chat', async (c) => {
    const account_ref_id = account(c.req.raw);
    if (!account_ref_id) return c.json({ error: 'sign in first' }, 401);
    const { prompt } = await c.req.json();
    // Per request: this account pays, once per Idempotency-Key (a retried request is not charged again).
    const ai = meter.openai(openai, { account_ref_id, event_key: c.req.header('idempotency-key') });
    let answer;
    try {
      answer = await ai.chat.completions.create(
        // max_completion_tokens bounds the cost: 'hold' reserves that much before the LLM is asked.
        {
          model: 'gpt-4o-mini',
          stream: true,
          max_completion_tokens: 100,
          messages: [{ role: 'user', content: prompt }],
        },
        // A client that leaves aborts the LLM call: it stops generating, and is charged what it generated.
        { signal: c.req.raw.signal },
      );
    } catch (error) {
      if (!(error instanceof InsufficientCreditsError)) throw error;
      return c.json(
        { error: 'insufficient_credits', required: error.required, available: error.available },
        402,
      );
    }
    return streamText(c, async (out) => {
      try {
        for await (const chunk of answer) await out.write(chunk.choices[0]?.delta.content ?? '');
      } finally {
        onBilled?.(); // the loop ends once the answer was charged, read to its end or left by the client
      }
    });
  });
  return app;
}

/** What the local LLM answers, four characters (one token) every 10 ms. */
const ANSWER =
  'Prepaid credits are bought ahead of use. Each answer costs the tokens it used: the prompt at the input ' +
  'price, the words written at the output price; an answer cut short, what was written before the cut.';

/** A stand-in for the LLM provider: OpenAI's chat completions wire format, streamed (server-sent events). */
async function startLocalLLM() {
  // Its own key, made per run as the mock makes its own: no real key is ever needed or written here.
  const llm = { calls: 0, apiKey: randomUUID() };
  const server = createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${llm.apiKey}`) return void res.writeHead(401).end();
    let raw = '';
    for await (const part of req) raw += part;
    const { model, max_completion_tokens, messages, stream_options } = JSON.parse(raw);
    llm.calls++;
    const tokens = ANSWER.match(/.{1,4}/gs).slice(0, max_completion_tokens);
    const send = (fields) =>
      res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', model, ...fields })}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const content of tokens) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (res.destroyed) return; // the caller left: nothing more is generated
      send({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
    }
    send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    // What the meter bills from: the usage chunk, last, sent when asked for (the meter asks for it).
    const prompt_tokens = Math.ceil(messages.map((m) => m.content).join('').length / 4);
    const usage = { prompt_tokens, completion_tokens: tokens.length };
    if (stream_options?.include_usage) send({ choices: [], usage });
    res.end('data: [DONE]\n\n');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(llm, { baseURL: `http://127.0.0.1:${server.address().port}/v1`, server });
}

// ── Runs the route against the embedded mock and the local LLM ────────────────────────────────
if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = await startMockServer();
  const llm = await startLocalLLM();
  const billing = new BillingClient({ apiKey: mock.apiKey, baseUrl: mock.baseUrl });
  // 'hold': prepaid credits are never overspent, and a call the balance cannot cover never runs.
  const meter = createAIMeter({ billing, ...CREDITS, price: { input: 0.1, output: 0.5 }, charge: 'hold' });
  const openai = new OpenAI({ baseURL: llm.baseURL, apiKey: llm.apiKey });
  // Each charge as the meter publishes it: model, tokens, cost, how the call ended (never the account or text).
  let charge;
  subscribe('billing-sdk:ai', (event) => (charge = event));
  let billed;
  const account = (request) => request.headers.get('x-account') ?? undefined;
  const app = createApp({ meter, openai, account, onBilled: () => billed() });
  const server = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const balance = async (account_ref_id) =>
    (await billing.usage.balance({ account_ref_id, ...CREDITS })).balance;
  const debits = (key) =>
    mock.requests.count((r) => r.path === '/api/usage/credits/debit/' && r.body.event_key === key);

  /** Asks as `account` under `key`; reads the answer, or leaves after `leaveAfter` characters. */
  async function chat(account, key, leaveAfter = Infinity) {
    const before = await balance(account);
    const charged = new Promise((resolve) => (billed = resolve));
    const res = await fetch(`http://127.0.0.1:${server.address().port}/chat`, {
      method: 'POST',
      headers: { 'x-account': account, 'idempotency-key': key },
      body: JSON.stringify({ prompt: 'What are prepaid credits?' }),
    });
    if (res.status !== 200) return console.log(`  POST /chat → ${res.status} ${await res.text()}`);
    let text = '';
    for await (const part of res.body.pipeThrough(new TextDecoderStream())) {
      text += part;
      if (text.length >= leaveAfter) break; // leaving the loop cancels the body: the connection closes
    }
    await charged;
    const { cost, usage, estimated, ended } = charge;
    const after = await balance(account);
    console.log(`  POST /chat → 200, ${text.length} characters read, ${ended}`);
    console.log(
      `  charged ${cost} credits for ${usage.input} input + ${usage.output} output tokens${estimated ? ' (estimated)' : ''}: balance ${before} → ${after}`,
    );
  }

  try {
    console.log('1. a whole answer:');
    await chat(DEMO.accounts.active, 'chat-1');
    console.log('2. the client leaves after 40 characters:');
    await chat(DEMO.accounts.active, 'chat-2', 40);
    await new Promise((resolve) => setTimeout(resolve, 100)); // time for a second charge, were there one
    console.log(`  debits under its key: ${debits('chat-2')} (never free, never charged twice)`);
    console.log('3. an account without credits:');
    await chat(DEMO.accounts.empty, 'chat-3');
    console.log(`  LLM calls in all: ${llm.calls} (none for the refused one: the LLM was never asked)`);
  } finally {
    server.close();
    llm.server.closeAllConnections();
    llm.server.close();
    await meter.close();
    await mock.close();
  }
}
