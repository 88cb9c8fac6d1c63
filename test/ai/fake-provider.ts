import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake LLM provider on loopback for the AI meter's tests: it speaks the OpenAI chat completions
 * and responses wire formats and Anthropic's messages, streamed (SSE, as the real services frame
 * them) and not, so the real `openai`, `@anthropic-ai/sdk` and `ai` packages can be pointed at it.
 * Every answer is `words` words, one token each; the input is `input` tokens whatever was sent.
 */
export interface FakeProviderOptions {
  /** Output tokens of an answer (one word each), unless a max tokens parameter stops it first. Default 6. */
  words?: number;
  /** Input tokens reported. Default 12. */
  input?: number;
  /** Of `input`, the tokens read from the cache. Default 0. */
  cached?: number;
  /** Of `input`, the tokens written to the cache (Anthropic). Default 0. */
  cacheWrite?: number;
  /** Of the output, reasoning tokens (OpenAI). Default 0. */
  reasoning?: number;
  /** Whole answers carry no usage (as some OpenAI-compatible servers answer). Default false. */
  noUsage?: boolean;
}

export interface FakeProvider {
  /** `http://127.0.0.1:port` */
  readonly origin: string;
  /** Requests answered, by path (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`). */
  readonly requests: Map<string, number>;
  /** Every request body, in order. */
  readonly bodies: Record<string, unknown>[];
  /** Requests in all. */
  count(): number;
  /** The next request answers this status (500 by default), once, with `retry-after-ms: 1`. */
  failOnce(status?: number): void;
  /** Streams send this many events, then the connection is destroyed. */
  cutAfter(events: number | undefined): void;
  /** Streams wait this long between events (and a streamed answer's first). */
  slow(ms: number): void;
  /** Words of an answer from now on. */
  set(options: FakeProviderOptions): void;
  /** Resolves once a streamed answer's connection closed (sent in full, cut, or left by the client). */
  closed(): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeProvider(initial: FakeProviderOptions = {}): Promise<FakeProvider> {
  let config: Required<FakeProviderOptions>;
  const defaults = (): Required<FakeProviderOptions> => ({
    words: 6,
    input: 12,
    cached: 0,
    cacheWrite: 0,
    reasoning: 0,
    noUsage: false,
    ...initial,
  });
  config = defaults();
  const requests = new Map<string, number>();
  const bodies: Record<string, unknown>[] = [];
  let fail: number | undefined;
  let cut: number | undefined;
  let delay = 0;
  let closedWaiters: (() => void)[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((e) => {
      if (process.env.FAKE_DEBUG) console.error(e);
      res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0] ?? '';
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    bodies.push(body);
    if (fail !== undefined) {
      const status = fail;
      fail = undefined;
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after-ms': '1' });
      res.end(JSON.stringify({ error: { message: 'fake outage', type: 'server_error' } }));
      return;
    }
    const max = (body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens) as
      | number
      | undefined;
    const n = typeof max === 'number' ? Math.min(max, config.words) : config.words;
    const cutShort = n < config.words;
    const words = Array.from({ length: n }, (_, i) => `w${i} `);
    const model = String(body.model ?? 'fake');
    let events: [string | undefined, unknown][];
    let whole: unknown;
    if (path === '/v1/chat/completions') [events, whole] = chat(body, model, words, cutShort);
    else if (path === '/v1/responses') [events, whole] = responses(model, words, cutShort);
    else if (path === '/v1/messages') [events, whole] = messages(model, words, cutShort);
    else {
      res.writeHead(404).end();
      return;
    }
    if (body.stream !== true) {
      // A background response answers at once, queued: its output and usage come later.
      if (path === '/v1/responses' && body.background === true)
        whole = { ...(whole as object), status: 'queued', output: [], usage: null };
      if (config.noUsage) whole = { ...(whole as object), usage: undefined };
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${bodies.length}` });
      res.end(JSON.stringify(whole));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    res.on('close', () => {
      const waiters = closedWaiters;
      closedWaiters = [];
      for (const w of waiters) w();
    });
    let sent = 0;
    for (const [event, data] of events) {
      if (res.destroyed) return;
      if (delay) await sleep(delay);
      if (cut !== undefined && sent === cut) {
        // What was written reaches the client before the connection goes.
        await sleep(30);
        res.destroy();
        return;
      }
      const payload = typeof data === 'string' ? data : JSON.stringify(data);
      res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
      sent++;
    }
    res.end();
  }

  function chatUsage() {
    return {
      prompt_tokens: config.input,
      completion_tokens: 0,
      total_tokens: 0,
      prompt_tokens_details: { cached_tokens: config.cached, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: config.reasoning, audio_tokens: 0 },
    };
  }

  function chat(
    body: Record<string, unknown>,
    model: string,
    words: string[],
    cutShort: boolean,
  ): [[string | undefined, unknown][], unknown] {
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model };
    const includeUsage =
      (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const u = chatUsage();
    const output = words.length + config.reasoning;
    const usage = { ...u, completion_tokens: output, total_tokens: config.input + output };
    const messages = Array.isArray(body.messages) ? (body.messages as { role?: string }[]) : [];
    // With tools and no tool result yet: the answer is a call of the first tool (a tool loop's first step).
    const tool =
      Array.isArray(body.tools) && !messages.some((m) => m.role === 'tool')
        ? (body.tools as { function: { name: string } }[])[0]?.function.name
        : undefined;
    const call = {
      index: 0,
      id: 'call_1',
      type: 'function',
      function: { name: tool, arguments: '{"city":"Paris"}' },
    };
    // Asked for JSON (generateObject): the words as a JSON object, the usage as ever.
    const content = body.response_format ? [JSON.stringify({ words: words.join('') })] : words;
    const finish = tool ? 'tool_calls' : cutShort ? 'length' : 'stop';
    const extra = includeUsage ? { usage: null } : {};
    const deltas = tool ? [{ tool_calls: [call] }] : content.map((w) => ({ content: w }));
    const events: [string | undefined, unknown][] = [
      [
        undefined,
        {
          ...base,
          ...extra,
          choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        },
      ],
      ...deltas.map((delta): [undefined, unknown] => [
        undefined,
        { ...base, ...extra, choices: [{ index: 0, delta, finish_reason: null }] },
      ]),
      [undefined, { ...base, ...extra, choices: [{ index: 0, delta: {}, finish_reason: finish }] }],
    ];
    if (includeUsage) events.push([undefined, { ...base, choices: [], usage }]);
    events.push([undefined, '[DONE]']);
    const whole = {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model,
      choices: [
        {
          index: 0,
          message: tool
            ? { role: 'assistant', content: null, refusal: null, tool_calls: [{ ...call, index: undefined }] }
            : { role: 'assistant', content: content.join(''), refusal: null },
          finish_reason: finish,
          logprobs: null,
        },
      ],
      usage,
    };
    return [events, whole];
  }

  function responses(
    model: string,
    words: string[],
    cutShort: boolean,
  ): [[string | undefined, unknown][], unknown] {
    const output = words.length + config.reasoning;
    const usage = {
      input_tokens: config.input,
      input_tokens_details: { cached_tokens: config.cached },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: config.reasoning },
      total_tokens: config.input + output,
    };
    const text = words.join('');
    const message = {
      type: 'message',
      id: 'msg_fake',
      status: cutShort ? 'incomplete' : 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    };
    const response = (status: string, extra: Record<string, unknown>) => ({
      id: 'resp_fake',
      object: 'response',
      created_at: 1_700_000_000,
      status,
      model,
      output: [],
      incomplete_details: null,
      error: null,
      usage: null,
      ...extra,
    });
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>): [string, unknown] => [
      type,
      { type, sequence_number: seq++, ...data },
    ];
    const final = cutShort
      ? response('incomplete', {
          output: [message],
          usage,
          incomplete_details: { reason: 'max_output_tokens' },
        })
      : response('completed', { output: [message], usage });
    const events: [string | undefined, unknown][] = [
      ev('response.created', { response: response('in_progress', {}) }),
      ev('response.in_progress', { response: response('in_progress', {}) }),
      ev('response.output_item.added', {
        output_index: 0,
        item: { ...message, status: 'in_progress', content: [] },
      }),
      ev('response.content_part.added', {
        item_id: 'msg_fake',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
      ...words.map((delta) =>
        ev('response.output_text.delta', {
          item_id: 'msg_fake',
          output_index: 0,
          content_index: 0,
          delta,
          logprobs: [],
        }),
      ),
      ev('response.output_text.done', {
        item_id: 'msg_fake',
        output_index: 0,
        content_index: 0,
        text,
        logprobs: [],
      }),
      ev('response.content_part.done', {
        item_id: 'msg_fake',
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text, annotations: [] },
      }),
      ev('response.output_item.done', { output_index: 0, item: message }),
      ev(cutShort ? 'response.incomplete' : 'response.completed', { response: final }),
    ];
    return [events, final];
  }

  function messages(
    model: string,
    words: string[],
    cutShort: boolean,
  ): [[string | undefined, unknown][], unknown] {
    const input = config.input - config.cached - config.cacheWrite;
    const usage = {
      input_tokens: input,
      cache_creation_input_tokens: config.cacheWrite,
      cache_read_input_tokens: config.cached,
      output_tokens: words.length,
    };
    const stop = cutShort ? 'max_tokens' : 'end_turn';
    const message = (content: unknown[], stop_reason: string | null, u: unknown) => ({
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      content,
      model,
      stop_reason,
      stop_sequence: null,
      usage: u,
    });
    const events: [string | undefined, unknown][] = [
      [
        'message_start',
        { type: 'message_start', message: message([], null, { ...usage, output_tokens: 1 }) },
      ],
      [
        'content_block_start',
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ],
      ['ping', { type: 'ping' }],
      ...words.map((text): [string, unknown] => [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
      ]),
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'message_delta',
        {
          type: 'message_delta',
          delta: { stop_reason: stop, stop_sequence: null },
          usage: { output_tokens: words.length },
        },
      ],
      ['message_stop', { type: 'message_stop' }],
    ];
    return [events, message([{ type: 'text', text: words.join('') }], stop, usage)];
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    bodies,
    count: () => [...requests.values()].reduce((a, b) => a + b, 0),
    failOnce: (status = 500) => {
      fail = status;
    },
    cutAfter: (events) => {
      cut = events;
    },
    slow: (ms) => {
      delay = ms;
    },
    set: (options) => {
      config = { ...config, ...options };
    },
    closed: () => new Promise((resolve) => closedWaiters.push(resolve)),
    reset: () => {
      requests.clear();
      bodies.length = 0;
      fail = undefined;
      cut = undefined;
      delay = 0;
      config = defaults();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
