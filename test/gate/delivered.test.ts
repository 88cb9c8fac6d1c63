import { pipeline, Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import express from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { type Context, Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CreditHolds,
  createCreditHolds,
  createGate,
  createUsageTracker,
  type GateAllowed,
  type GateNeeds,
  type GateRequest,
  memorySpool,
  type UsageTracker,
} from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { type LoopbackServer, serveNode, until, useMockServer } from '../helpers.js';
import { AI, gateOptions, header, serveHono, setupFor, USAGE } from './helpers.js';

// A 2xx body is what the customer pays for: the request finishes (the hold settled with what was
// used, the usage tracked) once the client has read the body to its end; a stream that errors or a
// client that leaves releases the hold and tracks nothing. In every adapter.
const mock = useMockServer();
const METER = DEMO.meters.credits;
const NEED: GateNeeds<GateRequest> = [
  { credits: { product_code: AI, meter_code: METER, quantity: 50, hold: true } },
  USAGE,
];

let n = 0;
async function account(balance: number): Promise<string> {
  const id = `acct_gate_body_${n++}`;
  await mock.server.lifecycle.subscribe({ account_ref_id: id });
  mock.server.store.setBalance(id, AI, METER, balance);
  return id;
}
const debitsOf = (id: string) =>
  [...mock.server.store.ledger.values()].filter((d) => d.account_ref_id === id).map((d) => d.quantity);

type Mode = 'stream' | 'error' | 'endless';
const encoder = new TextEncoder();
/**
 * The handler's body: `stream` sends two chunks, says it used 10, then a third; `error` fails after
 * its first chunk; `endless` sends a chunk every 5 ms until cancelled.
 */
function body(mode: Mode, use: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      i++;
      if (mode === 'endless') {
        if (i > 1) await new Promise((resolve) => setTimeout(resolve, 5));
        controller.enqueue(encoder.encode(`chunk ${i}\n`));
        return;
      }
      if (i === 2 && mode === 'error') {
        controller.error(new Error('the model failed'));
        return;
      }
      if (i === 3) use();
      if (i === 4) controller.close();
      else controller.enqueue(encoder.encode(`chunk ${i}\n`));
    },
  });
}
const modeOf = (request: GateRequest) => header(request, 'x-mode') as Mode;
const useOf = (decision: GateAllowed | undefined) => () => decision?.hold?.use(10);

interface Adapter {
  name: string;
  serve(gate: Parameters<typeof gateOptions>[0], need: GateNeeds<GateRequest>): Promise<LoopbackServer>;
}

const ADAPTERS: Adapter[] = [
  {
    name: 'protect',
    async serve(setup, need) {
      const gate = createGate(gateOptions<Request>(setup));
      const handler = gate.protect(
        need,
        (request: Request) =>
          new Response(body(modeOf(request), useOf(gate.decisionOf(request))), { status: 200 }),
      );
      return serveHono(handler);
    },
  },
  ...[false, true].map(
    (wrapped): Adapter => ({
      name: wrapped ? 'hono (wrapped handler)' : 'hono',
      async serve(setup, need) {
        const gate = createGate(gateOptions<Request>(setup));
        type Env = { Variables: { billing: GateAllowed } };
        const app = new Hono<Env>();
        const handler = (c: Context<Env>) => c.body(body(modeOf(c.req.raw), useOf(c.get('billing'))));
        if (wrapped) app.all('/r', gate.hono(need, handler));
        else app.all('/r', gate.hono(need), handler);
        return serveHono(app.fetch);
      },
    }),
  ),
  {
    name: 'express',
    async serve(setup, need) {
      const gate = createGate<express.Request>(gateOptions(setup));
      const app = express();
      app.all('/r', gate.express(need), (req, res) => {
        const stream = body(modeOf(req), useOf(res.locals.billing));
        res.status(200);
        pipeline(Readable.fromWeb(stream as NodeReadableStream<Uint8Array>), res, () => {});
      });
      return serveNode(app);
    },
  },
  {
    name: 'fastify',
    async serve(setup, need) {
      const gate = createGate<FastifyRequest>(gateOptions(setup));
      const app = Fastify({ forceCloseConnections: true });
      app.route({
        method: ['GET', 'POST'],
        url: '/r',
        preHandler: gate.fastify(need),
        handler: (request, reply) =>
          reply
            .code(200)
            .send(
              Readable.fromWeb(
                body(modeOf(request), useOf(request.billing)) as NodeReadableStream<Uint8Array>,
              ),
            ),
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
    },
  },
];

describe.each(ADAPTERS)('a streamed 2xx body through $name', (adapter) => {
  let open: LoopbackServer[] = [];
  let trackers: UsageTracker[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    await Promise.all(trackers.map((t) => t.close({ timeoutMs: 0 }).catch(() => {})));
    open = [];
    trackers = [];
  });
  const start = async (): Promise<{ url: string; holds: CreditHolds; tracker: UsageTracker }> => {
    const setup = setupFor(mock.server);
    const holds = createCreditHolds(setup.billing);
    const tracker = createUsageTracker(setup.billing, { spool: memorySpool() });
    trackers.push(tracker);
    const server = await adapter.serve({ ...setup, holds, tracker }, NEED);
    open.push(server);
    return { url: server.url, holds, tracker };
  };
  const tracked = (tracker: UsageTracker) => {
    const s = tracker.stats();
    return s.queued + s.inFlight + s.recorded + s.deadLettered;
  };
  const send = (url: string, id: string, mode: Mode, signal?: AbortSignal) =>
    fetch(`${url}/r`, { method: 'POST', headers: { 'x-account': id, 'x-mode': mode }, signal });

  it('read to its end: settles what the stream said it used before its end, and tracks the usage once', async () => {
    const id = await account(100);
    const { url, holds, tracker } = await start();
    const answer = await send(url, id, 'stream');
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('chunk 1\nchunk 2\nchunk 3\n');
    await until(() => holds.stats().settled === 1);
    expect(debitsOf(id)).toEqual([10]);
    await until(() => tracked(tracker) === 1);
    expect(holds.stats()).toMatchObject({ released: 0, open: 0 });
  });

  it('a stream that errors after its first chunk: the hold released, nothing debited, no usage', async () => {
    const id = await account(100);
    const { url, holds, tracker } = await start();
    // Whether the server had sent the head (the body then breaks) or not yet (a 500, or the
    // connection dropped), the client never gets the whole answer.
    const whole = await send(url, id, 'error')
      .then(async (answer) => answer.status === 200 && (await answer.text()).length > 0)
      .catch(() => false);
    expect(whole).toBe(false);
    await until(() => holds.stats().released === 1);
    // The hold and the usage are one step of the route's end: released, so no usage was handed over.
    expect(holds.stats()).toMatchObject({ settled: 0, open: 0 });
    expect(tracked(tracker)).toBe(0);
    expect(debitsOf(id)).toEqual([]);
  });

  it('a client that reads one chunk and leaves: the hold released, nothing debited, no usage', async () => {
    const id = await account(100);
    const { url, holds, tracker } = await start();
    const leave = new AbortController();
    const answer = await send(url, id, 'endless', leave.signal);
    expect(answer.status).toBe(200);
    const reader = answer.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    leave.abort();
    await until(() => holds.stats().released === 1);
    expect(holds.stats()).toMatchObject({ settled: 0, open: 0 });
    expect(tracked(tracker)).toBe(0);
    expect(debitsOf(id)).toEqual([]);
  });
});

describe('a streamed body and waitUntil', () => {
  it('protect with a context: the platform is handed the settle when the answer leaves; it ends once the body was read', async () => {
    const id = await account(100);
    const setup = setupFor(mock.server);
    const holds = createCreditHolds(setup.billing);
    const tracker = createUsageTracker(setup.billing, { spool: memorySpool() });
    const gate = createGate(gateOptions<Request>({ ...setup, holds, tracker }));
    const handled: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => void handled.push(p) };
    const handler = gate.protect(NEED, (request: Request, _env: object, _ctx: typeof ctx) => {
      return new Response(body('stream', useOf(gate.decisionOf(request))));
    });
    const answer = await handler(new Request('http://app.test/r', { headers: { 'x-account': id } }), {}, ctx);
    expect(handled.length).toBe(1);
    expect(holds.stats()).toMatchObject({ open: 1, settled: 0 });
    expect(await answer.text()).toBe('chunk 1\nchunk 2\nchunk 3\n');
    await Promise.all(handled);
    expect(holds.stats()).toMatchObject({ open: 0, settled: 1 });
    expect(debitsOf(id)).toEqual([10]);
    await tracker.close();
  });
});
