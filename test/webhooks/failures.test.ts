import { request as httpRequest, type RequestListener } from 'node:http';
import { Readable } from 'node:stream';
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createNodeWebhookHandler,
  createWebhookHandler,
  type DedupeStore,
  memoryDedupeStore,
  type WebhookEvent,
  type WebhookHandlerOptions,
} from '../../src/index.js';
import { type LoopbackServer, serveFetch, serveNode } from '../helpers.js';
import { event } from './event.js';

// Failures in the user's callbacks and the dedupe store must become answers: an unhandled rejection
// would leave the sender waiting and, under Node's default handling, end the receiving process.
const unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => void process.on('unhandledRejection', recordUnhandled));
afterAll(() => void process.off('unhandledRejection', recordUnhandled));

/**
 * Lets any stray rejection of the test surface: Node reports a rejection still unhandled once the
 * microtask queue drained, before the next turn of the event loop, which this waits for.
 */
const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(async () => {
  await settle();
  // Emptied before asserting, so one test's stray rejection does not fail the next ones too.
  expect(unhandled.splice(0)).toEqual([]);
});

const boom = () => {
  throw new Error('secret detail: store down');
};
const rejectBoom = async () => boom();
/** A plain object (so failing methods can be spread over it) around a memory store with a fake clock. */
const memory = (now: () => number = () => 0): DedupeStore => {
  const store = memoryDedupeStore({ now });
  return {
    claim: (id, token, ttlMs) => store.claim(id, token, ttlMs),
    renew: (id, token, ttlMs) => store.renew(id, token, ttlMs),
    complete: (id, token) => store.complete(id, token),
    release: (id, token) => store.release(id, token),
  };
};

/** Each way a delivery can fail after its body parsed, as handler options. */
const failures: [string, () => WebhookHandlerOptions][] = [
  ['onError throws', () => ({ onEvent: boom, onError: boom })],
  ['onError rejects', () => ({ onEvent: boom, onError: rejectBoom })],
  ['dedupe.claim throws', () => ({ onEvent: () => {}, dedupe: { ...memory(), claim: boom } })],
  ['dedupe.claim rejects', () => ({ onEvent: () => {}, dedupe: { ...memory(), claim: rejectBoom } })],
  [
    'dedupe.claim answers something else',
    () => ({ onEvent: () => {}, dedupe: { ...memory(), claim: () => 'maybe' as never } }),
  ],
  ['dedupe.complete throws', () => ({ onEvent: () => {}, dedupe: { ...memory(), complete: boom } })],
  ['dedupe.complete rejects', () => ({ onEvent: () => {}, dedupe: { ...memory(), complete: rejectBoom } })],
  [
    'dedupe.complete rejects and onError throws',
    () => ({ onEvent: () => {}, dedupe: { ...memory(), complete: rejectBoom }, onError: boom }),
  ],
  [
    'onEvent throws and dedupe.release rejects',
    () => ({ onEvent: boom, dedupe: { ...memory(), release: rejectBoom } }),
  ],
];

/** Counts `res.end` calls of a Node listener's responses, to prove no path ends one twice. */
function countingEnds(listener: RequestListener): { listener: RequestListener; ends: number[] } {
  const ends: number[] = [];
  return {
    ends,
    listener: (req, res) => {
      const index = ends.push(0) - 1;
      const end = res.end.bind(res) as (...args: unknown[]) => typeof res;
      res.end = ((...args: unknown[]) => {
        ends[index]!++;
        return end(...args);
      }) as typeof res.end;
      listener(req, res);
    },
  };
}

/** The handler behind each transport; `ends` is filled for the Node ones. */
const transports: [string, (options: WebhookHandlerOptions, ends: number[][]) => Promise<LoopbackServer>][] =
  [
    ['Fetch API handler', (o) => serveFetch(createWebhookHandler(o))],
    [
      'node:http handler',
      (o, ends) => {
        const counted = countingEnds(createNodeWebhookHandler(o) as RequestListener);
        ends.push(counted.ends);
        return serveNode(counted.listener);
      },
    ],
    [
      'Express with express.json()',
      (o, ends) => {
        const counted = countingEnds(createNodeWebhookHandler(o) as RequestListener);
        ends.push(counted.ends);
        return serveNode(express().use(express.json()).post('/', counted.listener) as never);
      },
    ],
    [
      'Express without a body parser',
      (o, ends) => {
        const counted = countingEnds(createNodeWebhookHandler(o) as RequestListener);
        ends.push(counted.ends);
        return serveNode(express().post('/', counted.listener) as never);
      },
    ],
  ];

describe.each(transports)('%s when a callback or the dedupe store fails', (_name, serve) => {
  let server: LoopbackServer | undefined;
  let ends: number[][] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    for (const counts of ends) expect(counts.every((n) => n === 1)).toBe(true);
    ends = [];
  });
  const post = async (body: string) => {
    // A hanging request fails the test in seconds instead of at the test timeout.
    const res = await fetch(`${server!.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(3000),
    });
    return { status: res.status, type: res.headers.get('content-type'), body: await res.json() };
  };

  it.each(failures)('%s: answers 500 with a JSON error, no unhandled rejection', async (_case, options) => {
    server = await serve(options(), ends);
    const answer = await post(JSON.stringify(event()));
    expect(answer).toEqual({ status: 500, type: 'application/json', body: { error: expect.any(String) } });
    expect(JSON.stringify(answer.body)).not.toContain('secret detail');
  });

  it('a failing dedupe.complete answers 500; retries get 409 until the claim lapses, then run onEvent again', async () => {
    let calls = 0;
    let completes = 0;
    let now = 0;
    const store = memory(() => now);
    const dedupe: DedupeStore = {
      ...store,
      complete: async (id, token) => {
        if (++completes === 1) throw new Error('store down');
        return store.complete(id, token);
      },
    };
    server = await serve({ onEvent: () => void calls++, dedupe, claimTtlMs: 5_000 }, ends);
    const body = JSON.stringify(event());
    expect((await post(body)).status).toBe(500);
    expect((await post(body)).status).toBe(409);
    now += 5_001;
    expect((await post(body)).status).toBe(200);
    expect((await post(body)).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('a failing dedupe.release after onEvent failed answers 500 and is reported; the claim lapses after its TTL', async () => {
    let calls = 0;
    let now = 0;
    const reported: unknown[] = [];
    server = await serve(
      {
        onEvent: () => {
          if (++calls === 1) throw new Error('handler down');
        },
        dedupe: { ...memory(() => now), release: rejectBoom },
        claimTtlMs: 5_000,
        onError: (error) => void reported.push(error),
      },
      ends,
    );
    const body = JSON.stringify(event());
    expect((await post(body)).status).toBe(500);
    expect(reported.map(String)).toEqual(['Error: secret detail: store down', 'Error: handler down']);
    expect((await post(body)).status).toBe(409);
    now += 5_001;
    expect((await post(body)).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('tells onError about a failing dedupe store, with the event', async () => {
    const reported: [unknown, WebhookEvent][] = [];
    const e = event();
    server = await serve(
      {
        onEvent: () => {},
        dedupe: { ...memory(), claim: rejectBoom },
        onError: (error, ev) => void reported.push([error, ev]),
      },
      ends,
    );
    expect((await post(JSON.stringify(e))).status).toBe(500);
    expect(reported).toHaveLength(1);
    expect(String(reported[0]![0])).toContain('store down');
    expect(reported[0]![1].transaction_id).toBe(e.transaction_id);
  });

  it('concurrent deliveries of one id share one onEvent run, and its 500, when dedupe.complete fails', async () => {
    let calls = 0;
    server = await serve(
      {
        onEvent: async () => {
          calls++;
          await new Promise((resolve) => setTimeout(resolve, 50));
        },
        dedupe: { ...memory(), complete: rejectBoom },
      },
      ends,
    );
    const body = JSON.stringify(event());
    const answers = await Promise.all([post(body), post(body), post(body)]);
    expect(answers.map((a) => a.status)).toEqual([500, 500, 500]);
    expect(calls).toBe(1);
  });
});

describe('createNodeWebhookHandler never hangs', () => {
  it('answers 400 when earlier middleware consumed the body and left none', async () => {
    let calls = 0;
    const app = express()
      .use(async (req, _res, next) => {
        for await (const _chunk of req);
        next();
      })
      .post('/', createNodeWebhookHandler({ onEvent: () => void calls++ }));
    const server = await serveNode(app as never);
    try {
      const res = await fetch(`${server.url}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event()),
        signal: AbortSignal.timeout(3000),
      });
      expect(res.status).toBe(400);
      expect(calls).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('createWebhookHandler never rejects', () => {
  it('answers 400 when the sender hangs up mid-body (the body stream fails)', async () => {
    const handler = createWebhookHandler({ onEvent: () => {} });
    // Wrapped in an object: resolving with the bare promise would wait for the response itself.
    let answered: (handled: { response: Promise<Response> }) => void;
    const handling = new Promise<{ response: Promise<Response> }>((resolve) => {
      answered = resolve;
    });
    // Streams the Node request into the Request as it arrives, as Hono's node adapter does, so a
    // broken upload reaches the handler as a failing body stream.
    const server = await serveNode((req, res) => {
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Readable.toWeb(req) as ReadableStream<Uint8Array>,
        duplex: 'half',
      } as RequestInit);
      const response = handler(request);
      answered({ response });
      response.then(
        () => res.destroy(),
        () => res.destroy(),
      );
    });
    try {
      const req = httpRequest(`${server.url}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '1000' },
      });
      req.on('error', () => {});
      req.write('{"event": "subscription-created", ');
      const { response } = await handling;
      req.destroy();
      const answer = await response;
      expect(answer.status).toBe(400);
      expect(await answer.json()).toEqual({ error: 'could not read body' });
    } finally {
      await server.close();
    }
  });

  it('answers 400 when the body stream errors, directly', async () => {
    const handler = createWebhookHandler({ onEvent: () => {} });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"event": '));
        controller.error(new Error('connection reset'));
      },
    });
    const response = await handler(
      new Request('http://x/', { method: 'POST', body, duplex: 'half' } as RequestInit),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
  });

  it('answers 500 rather than rejecting when given something that is not a Request', async () => {
    const handler = createWebhookHandler({ onEvent: () => {} });
    const response = await handler(undefined as never);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: expect.any(String) });
  });
});
