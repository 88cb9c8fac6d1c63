import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createNodeWebhookHandler,
  createWebhookHandler,
  type DedupeStore,
  memoryDedupeStore,
  parseWebhook,
  WebhookError,
  type WebhookEvent,
  type WebhookHandlerOptions,
} from '../../src/index.js';
import { caught, type LoopbackServer, serveFetch, serveNode } from '../helpers.js';
import { event } from './event.js';

describe('parseWebhook', () => {
  it('parses text, bytes and objects; unknown names and fields pass through', () => {
    const e = { ...event({ event: 'invoice-exploded' }), extra: 1 };
    expect(parseWebhook(JSON.stringify(e))).toEqual(e);
    expect(parseWebhook(new TextEncoder().encode(JSON.stringify(e)))).toEqual(e);
    expect(parseWebhook(e).event).toBe('invoice-exploded');
  });

  it('throws WebhookError for non-JSON and for missing fields', async () => {
    expect(await caught(() => parseWebhook('{nope'))).toBeInstanceOf(WebhookError);
    const { transaction_id: _, ...missing } = event();
    const err = (await caught(() => parseWebhook(missing))) as WebhookError;
    expect(err.issues.map((i) => i.path)).toEqual([['transaction_id']]);
  });

  it('throws WebhookError, not the getter error, for an object that throws when read', async () => {
    const getter = Object.defineProperty({ ...event() }, 'is_active', {
      enumerable: true,
      get() {
        throw new TypeError('getter exploded');
      },
    });
    const proxy = new Proxy(event(), {
      get() {
        throw new TypeError('trap exploded');
      },
      getPrototypeOf() {
        throw new TypeError('trap exploded');
      },
    });
    for (const body of [getter, proxy]) {
      const err = await caught(() => parseWebhook(body));
      expect(err).toBeInstanceOf(WebhookError);
      expect(err.message).not.toContain('exploded');
    }
  });
});

describe('memoryDedupeStore', () => {
  it('forgets the oldest done ids beyond its bound', () => {
    const store = memoryDedupeStore(2);
    for (const id of ['a', 'b', 'c']) {
      store.claim(id, 't', 60_000);
      store.complete(id, 't');
    }
    // Newest first: a claim of a forgotten id is itself an entry, and would push out the next.
    expect(['c', 'b', 'a'].map((id) => store.claim(id, 'u', 60_000))).toEqual(['done', 'done', 'claimed']);
  });

  it('never forgets a live claim to stay in bound: done or expired entries go first', () => {
    let now = 0;
    const store = memoryDedupeStore({ max: 2, now: () => now });
    store.claim('live', 't', 60_000);
    store.claim('short', 't', 10);
    now = 20;
    store.claim('new', 't', 60_000); // over the bound: the expired claim goes, not the older live one
    expect(store.claim('live', 'u', 60_000)).toBe('processing');
    store.claim('newer', 't', 60_000); // all live: the bound gives way rather than a claim
    expect(['live', 'new', 'newer'].map((id) => store.claim(id, 'u', 60_000))).toEqual([
      'processing',
      'processing',
      'processing',
    ]);
  });
});

/** The handler behind each transport: fetch handler, node:http, Express with raw body, Express with json(). */
const transports: [string, (options: WebhookHandlerOptions) => Promise<LoopbackServer>][] = [
  ['Fetch API handler', (o) => serveFetch(createWebhookHandler(o))],
  ['node:http handler', (o) => serveNode(createNodeWebhookHandler(o))],
  [
    'Express with express.json()',
    (o) => serveNode(express().use(express.json()).post('/', createNodeWebhookHandler(o)) as never),
  ],
  [
    'Express without a body parser',
    (o) => serveNode(express().post('/', createNodeWebhookHandler(o)) as never),
  ],
];

describe.each(transports)('%s', (_name, serve) => {
  let server: LoopbackServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const post = async (body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server!.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const type = res.headers.get('content-type');
    // Express's own json() parser answers malformed JSON itself, with an HTML page.
    const answer = type?.startsWith('application/json') ? await res.json() : await res.text();
    return { status: res.status, type, body: answer };
  };

  it('answers 200 {"received": true} after onEvent, once per transaction_id', async () => {
    const seen: WebhookEvent[] = [];
    server = await serve({ onEvent: (e) => void seen.push(e) });
    const e = event();
    const first = await post(JSON.stringify(e));
    expect(first).toEqual({ status: 200, type: 'application/json', body: { received: true } });
    const duplicate = await post(JSON.stringify(e));
    expect(duplicate.status).toBe(200);
    expect(duplicate.body).toEqual({ received: true });
    expect(seen).toEqual([e]);
  });

  it('a failing onEvent answers 500 and leaves the id unmarked, so a retry runs it again', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    server = await serve({
      onEvent: () => {
        calls++;
        if (calls === 1) throw new Error('database down');
      },
      onError: (err) => errors.push(err),
    });
    const e = JSON.stringify(event());
    const failed = await post(e);
    expect(failed.status).toBe(500);
    expect(JSON.stringify(failed.body)).not.toContain('database down');
    expect((await post(e)).status).toBe(200);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it('answers 400 for a malformed body and 413 for one over the limit', async () => {
    let calls = 0;
    server = await serve({ onEvent: () => void calls++, maxBodyBytes: 1024 });
    expect((await post('{"event": 1}')).status).toBe(400);
    expect((await post('not json')).status).toBe(400);
    const big = JSON.stringify({ ...event(), padding: 'x'.repeat(4096) });
    expect((await post(big)).status).toBe(413);
    expect(calls).toBe(0);
  });

  it('uses a custom (async) dedupe store', async () => {
    const done = new Set<string>(['already-done']);
    const dedupe: DedupeStore = {
      claim: async (id) => (done.has(id) ? 'done' : 'claimed'),
      renew: async () => true,
      complete: async (id) => !done.add(id),
      release: async () => {},
    };
    let calls = 0;
    server = await serve({ onEvent: () => void calls++, dedupe });
    expect((await post(JSON.stringify(event({ transaction_id: 'already-done' })))).status).toBe(200);
    expect((await post(JSON.stringify(event({ transaction_id: 'new-one' })))).status).toBe(200);
    expect(calls).toBe(1);
    expect(done.has('new-one')).toBe(true);
  });

  it('answers 409 with Retry-After and a JSON reason while another receiver processes the id', async () => {
    const dedupe = memoryDedupeStore();
    let calls = 0;
    server = await serve({ onEvent: () => void calls++, dedupe, claimTtlMs: 30_000 });
    const e = event();
    dedupe.claim(e.transaction_id, 'another-receiver', 30_000);
    const res = await fetch(`${server.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(e),
    });
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: expect.stringContaining('being processed'), retryable: true });
    expect(calls).toBe(0);
    // The other receiver finishes: the retry is acknowledged without running onEvent here.
    dedupe.complete(e.transaction_id, 'another-receiver');
    expect(await post(JSON.stringify(e))).toEqual({
      status: 200,
      type: 'application/json',
      body: { received: true },
    });
    expect(calls).toBe(0);
  });
});

describe('createWebhookHandler directly', () => {
  it('answers 405 to anything but POST', async () => {
    const handler = createWebhookHandler({ onEvent: () => {} });
    const res = await handler(new Request('http://x/', { method: 'GET' }));
    expect(res.status).toBe(405);
  });

  it('runs onEvent once for concurrent deliveries of one id', async () => {
    let calls = 0;
    const handler = createWebhookHandler({
      onEvent: async () => {
        calls++;
        await new Promise((r) => setTimeout(r, 50));
      },
    });
    const body = JSON.stringify(event());
    const send = () => handler(new Request('http://x/', { method: 'POST', body }));
    const answers = await Promise.all([send(), send(), send()]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(calls).toBe(1);
  });
});
