import express from 'express';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createAccessCache,
  createGate,
  type DedupeStore,
  type GateDecision,
  InvalidRequestError,
  memoryDedupeStore,
} from '../../src/index.js';
import { clientFor, serveNode, useMockServer } from '../helpers.js';
import { A, AI, credits, DEBIT_PATH } from './helpers.js';
import { replayCases } from './replay-cases.js';

const mock = useMockServer();
const balance = () => mock.server.store.balance(A, AI, 'credits');
const debits = () => mock.server.requests.count({ method: 'POST', path: DEBIT_PATH });

replayCases('in memory', mock, async () => {
  const store = memoryDedupeStore();
  return [store, store];
});

describe('idempotency.replay under gate.check: done(answer) keeps the answer', () => {
  const gateOf = (idempotency: object) => {
    const billing = clientFor(mock.server, { maxRetries: 0 });
    return createGate({
      billing,
      access: createAccessCache(billing),
      account: (request: Request) => request.headers.get('x-account') ?? undefined,
      idempotency,
    });
  };
  const request = (key: string, path = '/jobs') =>
    new Request(`http://app.test${path}`, {
      method: 'POST',
      headers: { 'x-account': A, 'idempotency-key': key },
    });
  const allowed = (d: GateDecision) => {
    if (!d.allowed) throw new Error(`refused ${d.status}`);
    return d;
  };

  it('the same request gets the answer again (kept headers only); another route is still 422', async () => {
    const gate = gateOf({ replay: true });
    const first = allowed(await gate.check(request('job-1'), credits(5)));
    await first.idempotency?.done({
      status: 201,
      headers: { 'Content-Type': 'application/json', Location: '/jobs/1', 'set-cookie': 'session=x' },
      body: '{"id":1}',
    });
    const again = await gate.check(request('job-1'), credits(5));
    expect(again).toMatchObject({ allowed: false, status: 201, reason: 'idempotency_key_replayed' });
    if (again.allowed) return;
    expect(await again.response.text()).toBe('{"id":1}');
    expect(Object.fromEntries(again.response.headers)).toEqual({
      'content-type': 'application/json',
      location: '/jobs/1',
      'idempotent-replayed': 'true',
      'cache-control': 'no-store',
    });
    const other = await gate.check(request('job-1', '/other'), credits(5));
    expect(other).toMatchObject({ allowed: false, status: 422, reason: 'idempotency_key_mismatch' });
    expect(debits()).toBe(1);
    expect(balance()).toBe(995);
  });

  it('done() without an answer, a 5xx answer or one over maxBytes: the key is used, 422', async () => {
    const gate = gateOf({ replay: { maxBytes: 4 } });
    const cases = [undefined, { status: 503, body: 'x' }, { status: 200, body: 'ééé' }];
    for (const [i, answer] of cases.entries()) {
      const d = allowed(await gate.check(request(`job-${i}`), credits(1)));
      await d.idempotency?.done(answer);
      const reuse = await gate.check(request(`job-${i}`), credits(1));
      expect(reuse).toMatchObject({ allowed: false, status: 422, reason: 'idempotency_key_used' });
    }
  });

  it('replay off, or a store without answer: the answer is not kept, 422 as before', async () => {
    const { answer: _, ...plain } = memoryDedupeStore();
    for (const idempotency of [{}, { replay: false }, { replay: true, store: plain as DedupeStore }]) {
      const gate = gateOf(idempotency);
      const d = allowed(await gate.check(request('job'), credits(1)));
      await d.idempotency?.done({ status: 200, body: 'ok' });
      const reuse = await gate.check(request('job'), credits(1));
      expect(reuse).toMatchObject({ allowed: false, status: 422, reason: 'idempotency_key_used' });
    }
  });

  it('a store that cannot keep the answer still uses the key (422); done() rejects with its error', async () => {
    const store = memoryDedupeStore();
    const failing: DedupeStore = {
      ...store,
      complete: (id, token, answer) =>
        answer === undefined ? store.complete(id, token) : Promise.reject(new Error('too big')),
    };
    const gate = gateOf({ replay: true, store: failing });
    const d = allowed(await gate.check(request('job'), credits(1)));
    await expect(d.idempotency?.done({ status: 200, body: 'ok' })).rejects.toThrow('too big');
    const reuse = await gate.check(request('job'), credits(1));
    expect(reuse).toMatchObject({ allowed: false, status: 422, reason: 'idempotency_key_used' });
  });

  it('property: replay is checked when the gate is made: a boolean, or maxBytes an integer 1 to 1 MiB', () => {
    const billing = clientFor(mock.server);
    const make = (replay: unknown) =>
      createGate({
        billing,
        access: createAccessCache(billing),
        account: () => A,
        idempotency: { replay } as never,
      });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.boolean(),
          fc.record({ maxBytes: fc.oneof(fc.integer({ min: -10, max: 2 * 1024 * 1024 }), fc.double()) }),
          fc.record({ maxBytes: fc.integer({ min: 1, max: 10 }), extra: fc.constant(1) }),
          fc.constantFrom('yes', 1, null, [], { maxBytes: '8' }),
        ),
        (replay) => {
          const bytes = (replay as { maxBytes?: unknown } | null)?.maxBytes;
          const valid =
            replay === null || // absent, as every option
            typeof replay === 'boolean' ||
            (typeof replay === 'object' &&
              !Array.isArray(replay) &&
              Object.keys(replay).every((k) => k === 'maxBytes') &&
              Number.isInteger(bytes) &&
              (bytes as number) >= 1 &&
              (bytes as number) <= 1024 * 1024);
          if (valid) expect(() => make(replay)).not.toThrow();
          else expect(() => make(replay)).toThrow(InvalidRequestError);
          if (!valid) expect(() => make(replay)).toThrow(/options\.idempotency\.replay/);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('memoryDedupeStore keeps an answer as long as the done mark, and none for a plain complete', () => {
    let now = 0;
    const store = memoryDedupeStore({ now: () => now, doneTtlMs: 1_000 });
    store.claim('a', 't', 100);
    store.complete('a', 't', 'kept');
    store.claim('b', 't', 100);
    store.complete('b', 't');
    expect([store.answer?.('a'), store.answer?.('b'), store.answer?.('c')]).toEqual([
      'kept',
      undefined,
      undefined,
    ]);
    now = 1_000;
    expect(store.answer?.('a')).toBeUndefined();
  });
});

describe('idempotency.replay: what is kept of a body as it is sent', () => {
  const options = (maxBytes: number) => {
    const billing = clientFor(mock.server, { maxRetries: 0 });
    return { billing, access: createAccessCache(billing), idempotency: { replay: { maxBytes } } };
  };

  it('Express: every chunk of res.write and res.end is kept; a body that is no UTF-8 text is not (422)', async () => {
    const gate = createGate<express.Request>({ ...options(64), account: (req) => req.get('x-account') });
    let runs = 0;
    const app = express();
    app.post('/text', gate.express(credits(1)), (_req, res) => {
      runs += 1;
      res.type('text/plain');
      res.write('one,');
      res.write(Buffer.from('two,'));
      res.end('three');
    });
    app.post('/binary', gate.express(credits(1)), (_req, res) => {
      runs += 1;
      res.type('application/octet-stream').end(Buffer.from([0xff, 0xfe, 0x00]));
    });
    const server = await serveNode(app);
    /** Asked again on a 409: Express marks the key once its answer was sent. */
    const post = async (path: string) => {
      for (let i = 0; ; i++) {
        const r = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'x-account': A, 'idempotency-key': `k${path}` },
        });
        if (r.status !== 409 || i === 100) return r;
        await r.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      expect(await (await post('/text')).text()).toBe('one,two,three');
      const again = await post('/text');
      expect([again.status, again.headers.get('idempotent-replayed'), await again.text()]).toEqual([
        200,
        'true',
        'one,two,three',
      ]);
      expect(again.headers.get('content-type')).toMatch(/^text\/plain/);
      expect((await post('/binary')).status).toBe(200);
      expect((await post('/binary')).status).toBe(422);
      expect(runs).toBe(2); // /text once, /binary once
    } finally {
      await server.close();
    }
  });

  it('protect: a streamed body is counted as it is read; past maxBytes nothing is kept (422)', async () => {
    const answer = (maxBytes: number) => {
      const gate = createGate({
        ...options(maxBytes),
        account: (r: Request) => r.headers.get('x-account') ?? undefined,
      });
      return gate.protect(credits(1), () => {
        const chunks = ['0123456789', 'abcdefghij', 'klmnopqrst'];
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            const next = chunks.shift();
            if (next === undefined) controller.close();
            else controller.enqueue(new TextEncoder().encode(next));
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/plain', 'set-cookie': 's=1' } });
      });
    };
    const request = (key: string) =>
      new Request('http://app.test/s', {
        method: 'POST',
        headers: { 'x-account': A, 'idempotency-key': key },
      });
    const kept = answer(30);
    expect(await (await kept(request('fits'))).text()).toHaveLength(30);
    const again = await kept(request('fits'));
    expect([again.status, await again.text(), again.headers.get('set-cookie')]).toEqual([
      200,
      '0123456789abcdefghijklmnopqrst',
      null,
    ]);
    const bounded = answer(29);
    expect(await (await bounded(request('over'))).text()).toHaveLength(30);
    expect((await bounded(request('over'))).status).toBe(422);
    expect(debits()).toBe(2);
  });
});
