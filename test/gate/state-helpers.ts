import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { Hono } from 'hono';
import type { AccountState, AccountStateHandler, AccountStateView } from '../../src/index.js';
import { createGate } from '../../src/index.js';
import { type LoopbackServer, serveNode } from '../helpers.js';
import { AI, gateOptions, type Setup, serveHono } from './helpers.js';

/** The view the state tests show: the export entitlement, an entitlement nobody has, and the credits. */
export const VIEW: AccountStateView = {
  features: {
    export: { product_code: AI, entitlement_code: 'export' },
    sso: { product_code: AI, entitlement_code: 'sso' },
  },
  credits: [{ product_code: AI, meter_code: 'credits' }],
};

/** A framework serving `gate.state(view)` at `/state` and a gated debit at `/spend`. */
export interface StateServer extends LoopbackServer {
  state: AccountStateHandler<never>;
}

type Serve = (setup: Setup, view: AccountStateView) => Promise<StateServer>;

/** `gate.state` under each framework, its session the `x-account` header. */
export const STATE_FRAMEWORKS: { name: string; serve: Serve }[] = [
  {
    name: 'hono',
    async serve(setup, view) {
      const gate = createGate(gateOptions<Request>(setup));
      const state = gate.state(view);
      const app = new Hono();
      app.get('/state', state.hono);
      app.post(
        '/spend',
        gate.hono(SPEND, () => new Response('ok')),
      );
      const s = await serveHono(app.fetch);
      return { ...s, state: state as AccountStateHandler<never>, close: () => closeBoth(state, s) };
    },
  },
  {
    name: 'express',
    async serve(setup, view) {
      const gate = createGate<express.Request>(gateOptions(setup));
      const state = gate.state(view);
      const app = express();
      app.get('/state', state.express);
      app.post('/spend', gate.express(SPEND), (_req, res) => void res.send('ok'));
      const s = await serveNode(app);
      return { ...s, state: state as AccountStateHandler<never>, close: () => closeBoth(state, s) };
    },
  },
  {
    name: 'fastify',
    async serve(setup, view) {
      const gate = createGate<FastifyRequest>(gateOptions(setup));
      const state = gate.state(view);
      const app = Fastify({ forceCloseConnections: true });
      app.get('/state', state.fastify);
      app.post('/spend', { preHandler: gate.fastify(SPEND) }, async () => 'ok');
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      const s = { url: `http://127.0.0.1:${port}`, close: () => app.close() };
      return { ...s, state: state as AccountStateHandler<never>, close: () => closeBoth(state, s) };
    },
  },
  {
    name: 'fetch (protect-style handler)',
    async serve(setup, view) {
      const gate = createGate(gateOptions<Request>(setup));
      const state = gate.state(view);
      const spend = gate.protect(SPEND, () => new Response('ok'));
      const s = await serveHono((request) =>
        new URL(request.url).pathname === '/state' ? state.fetch(request) : spend(request),
      );
      return { ...s, state: state as AccountStateHandler<never>, close: () => closeBoth(state, s) };
    },
  },
];

/** Five credits of ai-assistant: the route `/spend` debits them. */
export const SPEND = { credits: { product_code: AI, meter_code: 'credits', quantity: 5 } };

async function closeBoth(state: AccountStateHandler<never>, server: LoopbackServer): Promise<void> {
  await state.close();
  await server.close();
}

/** The state events of a stream, read one at a time (comments and `retry` skipped, counted). */
export function sse(response: Response): {
  next(): Promise<AccountState>;
  comments: () => number;
  ended(): Promise<boolean>;
  cancel(): Promise<void>;
} {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let comments = 0;
  const block = async (): Promise<string | undefined> => {
    for (;;) {
      const at = buffer.indexOf('\n\n');
      if (at >= 0) {
        const b = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        return b;
      }
      const { done, value } = await reader.read();
      if (done) return undefined;
      buffer += decoder.decode(value, { stream: true });
    }
  };
  const next = async (): Promise<AccountState | undefined> => {
    for (;;) {
      const b = await block();
      if (b === undefined) return undefined;
      if (b.startsWith(':')) comments++;
      const data = b.split('\n').find((line) => line.startsWith('data: '));
      if (b.includes('event: state') && data) return JSON.parse(data.slice(6)) as AccountState;
    }
  };
  return {
    async next() {
      const state = await next();
      if (!state) throw new Error('the stream ended');
      return state;
    },
    comments: () => comments,
    async ended() {
      return (await next()) === undefined;
    },
    cancel: () => reader.cancel(),
  };
}

/** Opens the state stream of `account` (none: no session). */
export function openStream(
  url: string,
  account: string | undefined,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${url}/state`, {
    headers: { accept: 'text/event-stream', ...(account ? { 'x-account': account } : {}) },
    signal,
  });
}
