import type { IncomingMessage } from 'node:http';
import express from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { type Context, Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { BillingClient, createAccessCache, createGate, type GateAllowed } from '../../src/index.js';

// Compiled by `tsc --noEmit` (test files included): each adapter in its framework's own types,
// without a cast. The runtime part only checks that each framework took the route.

declare module 'fastify' {
  interface FastifyRequest {
    /** Where `gate.fastify` leaves an allowed decision. */
    billing?: GateAllowed;
  }
}

const billing = new BillingClient({
  apiKey: 'typing-only',
  baseUrl: 'http://127.0.0.1:9/api/',
  logLevel: 'off',
});
const access = createAccessCache(billing);
// Unannotated: a `GateNeeds` annotation means `GateNeeds<Request>` (Fetch), which a quantity function
// would tie to Fetch requests; a plain object literal fits every adapter.
const need = { subscription: 'pro-plan', tier: 'pro' };

/** Express 5, on Express's request type and on Node's (Connect, node:http). */
function expressApp() {
  const gate = createGate<express.Request>({ billing, access, account: (req) => req.get('x-account') });
  const nodeGate = createGate<IncomingMessage>({
    billing,
    access,
    account: (req) => req.headers['x-account']?.toString(),
  });
  const app = express();
  app.get('/export', gate.express(need), (_req, res) => {
    const decision: GateAllowed = res.locals.billing;
    res.json(decision);
  });
  app.post(
    '/node',
    nodeGate.express([need, { credits: { product_code: 'p', meter_code: 'm', quantity: 1 } }]),
    (_req, res) => {
      res.json(res.locals.billing);
    },
  );
  app.use('/all', gate.express(need));
  // The wrapped form: the handler keeps Express's own types for `req` and `res`.
  app.get(
    '/wrapped',
    gate.express(need, (req, res: express.Response) => {
      res.json({ account: (res.locals.billing as GateAllowed).account_ref_id, path: req.path });
    }),
  );
  app.get(
    '/wrapped-async',
    gate.express(need, async (_req, res: express.Response) => {
      res.json(res.locals.billing);
    }),
  );
  return app;
}

/** Fastify 5: a route's `preHandler`, alone or in an array; the decision at `request.billing`. */
function fastifyApp() {
  const gate = createGate<FastifyRequest>({
    billing,
    access,
    account: (request) => request.headers['x-account']?.toString(),
    paywall: { signingKey: 'k', email: (request) => request.headers['x-email']?.toString() },
  });
  const app = Fastify();
  app.get('/export', { preHandler: gate.fastify(need) }, async (request) => {
    const decision: GateAllowed | undefined = request.billing;
    return { decision };
  });
  app.route({
    method: 'POST',
    url: '/credits',
    preHandler: [
      gate.fastify({
        credits: { product_code: 'p', meter_code: 'm', quantity: (r) => Number(r.headers['x-n']) },
      }),
    ],
    handler: async (request, reply) => reply.send(request.billing?.debit),
  });
  return app;
}

/** Hono 4: `app.get(path, gate.hono(need), handler)`, with and without declared variables. */
function honoApps() {
  const gate = createGate({
    billing,
    access,
    account: (request: Request) => request.headers.get('x-account') ?? undefined,
  });
  const typed = new Hono<{ Variables: { billing: GateAllowed } }>();
  typed.get('/export', gate.hono(need), (c) => {
    const decision: GateAllowed = c.get('billing');
    return c.json(decision);
  });
  typed.use('/api/*', gate.hono(need));
  const plain = new Hono();
  plain.get('/export', gate.hono(need), (c) => c.text('ok'));
  // The wrapped form: one handler, given Hono's own context type.
  typed.get(
    '/wrapped',
    gate.hono(need, (c: Context<{ Variables: { billing: GateAllowed } }>) => c.json(c.get('billing'))),
  );
  plain.get(
    '/wrapped',
    gate.hono(need, async (c: Context) => c.text('ok')),
  );
  return { typed, plain };
}

/** `gate.protect`: a plain Fetch handler, and a Next.js route handler with its context. */
function fetchHandlers() {
  const gate = createGate({
    billing,
    access,
    account: (request: Request) => request.headers.get('x-account') ?? undefined,
  });
  const GET: (request: Request) => Promise<Response> = async (request) =>
    gate.protect(need, () => new Response('ok'))(request);
  const POST = gate.protect(need, async (_request: Request, context: { params: Promise<{ id: string }> }) =>
    Response.json({ id: (await context.params).id }),
  );
  const worker: { fetch: (request: Request) => Response | Promise<Response> } = {
    fetch: gate.protect(need, () => new Response('ok')),
  };
  return { GET, POST, worker };
}

describe('the adapters in their frameworks’ own types', () => {
  it('each framework takes the gated route', async () => {
    const ex = expressApp();
    expect(typeof ex).toBe('function');
    const fa = fastifyApp();
    await fa.ready();
    expect(fa.hasRoute({ method: 'GET', url: '/export' })).toBe(true);
    expect(fa.hasRoute({ method: 'POST', url: '/credits' })).toBe(true);
    await fa.close();
    const { typed, plain } = honoApps();
    expect(typed.routes.length).toBeGreaterThan(0);
    expect(plain.routes.length).toBeGreaterThan(0);
    const handlers = fetchHandlers();
    expect(typeof handlers.POST).toBe('function');
    await access.close();
  });
});
