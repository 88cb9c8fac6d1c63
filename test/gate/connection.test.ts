import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import {
  type CreditHolds,
  createCreditHolds,
  createGate,
  createUsageTracker,
  type GateRequest,
  memorySpool,
} from '../../src/index.js';
import { DEMO } from '../../src/testing/index.js';
import { type LoopbackServer, serveNode, until, useMockServer } from '../helpers.js';
import {
  AI,
  credits,
  FRAMEWORKS,
  type Framework,
  gateOptions,
  type Need,
  serveHono,
  setupFor,
  USAGE,
} from './helpers.js';

// The connection under the gate's Node adapters, and requests that are never actions.
const mock = useMockServer();
const METER = DEMO.meters.credits;
const HOLD: Need = { credits: { product_code: AI, meter_code: METER, quantity: 30, hold: true } };

let n = 0;
async function account(balance: number): Promise<string> {
  const id = `acct_gate_conn_${n++}`;
  await mock.server.lifecycle.subscribe({ account_ref_id: id });
  mock.server.store.setBalance(id, AI, METER, balance);
  return id;
}
const debitsOf = (id: string) =>
  [...mock.server.store.ledger.values()].filter((d) => d.account_ref_id === id);

/** The socket under a Node request as each framework hands it over (Fastify's at `raw`). */
const socketOf = (request: GateRequest): Socket =>
  ((request as { raw?: IncomingMessage }).raw ?? (request as IncomingMessage)).socket;

/** node:http (and Connect): the middleware called with the route's handler as its `next`. */
const nodeHttp: Framework = {
  name: 'node:http',
  seesDecision: true,
  async serve(setup, route) {
    const gate = createGate<IncomingMessage>(gateOptions(setup));
    const mw = gate.express(route.need);
    let handled = 0;
    const server = await serveNode((req, res) =>
      mw(req, res, () => {
        handled++;
        res.end('ok');
      }),
    );
    return {
      ...server,
      errors: [],
      get handled() {
        return handled;
      },
    };
  },
};

const NODE = [...FRAMEWORKS.filter((f) => /^(express|fastify)/.test(f.name)), nodeHttp];

describe.each(NODE)('a client that leaves while the gate decides, in $name', (framework) => {
  it('frees the hold at once and never calls the handler', async () => {
    const id = await account(100);
    const setup = setupFor(mock.server);
    const holds: CreditHolds = createCreditHolds(setup.billing);
    let entered!: () => void;
    const deciding = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let gone!: () => void;
    const closed = new Promise<void>((resolve) => {
      gone = resolve;
    });
    // The app's `account` is slow: the client gives up meanwhile; it answers once the server saw it go.
    const slowAccount = async (request: GateRequest) => {
      socketOf(request).once('close', () => gone());
      entered();
      await closed;
      return id;
    };
    const served = await framework.serve({ ...setup, holds, account: slowAccount }, { need: HOLD });
    try {
      const leave = new AbortController();
      const sent = fetch(`${served.url}/r`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        signal: leave.signal,
      }).catch(() => 'left');
      await deciding;
      leave.abort();
      expect(await sent).toBe('left');
      await until(() => holds.stats().released === 1);
      expect(holds.stats()).toMatchObject({ reserved: 1, settled: 0, open: 0 });
      expect(served.handled).toBe(0);
      expect(debitsOf(id)).toEqual([]);
    } finally {
      await served.close();
    }
  });
});

describe('an OPTIONS request through a gate mounted for every method', () => {
  const need = [credits(7), USAGE];
  /** A gate whose usage need is counted by `tracked()`. */
  const setupWith = () => {
    const setup = setupFor(mock.server);
    const tracker = createUsageTracker(setup.billing, { spool: memorySpool() });
    const tracked = () => {
      const s = tracker.stats();
      return s.queued + s.inFlight + s.recorded + s.deadLettered;
    };
    return { setup: { ...setup, tracker }, tracker, tracked };
  };
  /** Sends OPTIONS then POST: once the POST's debit is in, the OPTIONS request was long decided. */
  const preflightThenPost = async (server: LoopbackServer, id: string) => {
    const options = await fetch(`${server.url}/api/x`, { method: 'OPTIONS', headers: { 'x-account': id } });
    await options.text();
    const post = await fetch(`${server.url}/api/x`, { method: 'POST', headers: { 'x-account': id } });
    expect(post.status).toBe(200);
    await post.text();
    return options.status;
  };

  it('Express app.use: passes undecided, never charged', async () => {
    const id = await account(100);
    const { setup, tracker, tracked } = setupWith();
    const gate = createGate<express.Request>(gateOptions(setup));
    const app = express();
    app.use('/api', gate.express(need));
    app.post('/api/x', (_req, res) => void res.json({ ok: true }));
    const server = await serveNode(app);
    try {
      expect(await preflightThenPost(server, id)).toBe(200);
      expect(debitsOf(id).map((d) => d.quantity)).toEqual([7]);
      await until(() => tracked() === 1);
    } finally {
      await server.close();
      await tracker.close({ timeoutMs: 0 }).catch(() => {});
    }
  });

  it('Hono app.use: passes undecided, never charged', async () => {
    const id = await account(100);
    const { setup, tracker, tracked } = setupWith();
    const gate = createGate(gateOptions<Request>(setup));
    const app = new Hono();
    app.use('/api/*', gate.hono(need));
    app.on(['POST', 'OPTIONS'], '/api/x', (c) => c.json({ ok: true }));
    const server = await serveHono(app.fetch);
    try {
      expect(await preflightThenPost(server, id)).toBe(200);
      expect(debitsOf(id).map((d) => d.quantity)).toEqual([7]);
      await until(() => tracked() === 1);
    } finally {
      await server.close();
      await tracker.close({ timeoutMs: 0 }).catch(() => {});
    }
  });

  it('Fastify preHandler on a route that takes OPTIONS: passes undecided, never charged', async () => {
    const id = await account(100);
    const { setup, tracker, tracked } = setupWith();
    const gate = createGate(gateOptions<GateRequest>(setup));
    const app = Fastify({ forceCloseConnections: true });
    app.route({
      method: ['POST', 'OPTIONS'],
      url: '/api/x',
      preHandler: gate.fastify(need),
      handler: (_request, reply) => reply.send({ ok: true }),
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    try {
      expect(await preflightThenPost({ url: `http://127.0.0.1:${port}`, close: async () => {} }, id)).toBe(
        200,
      );
      expect(debitsOf(id).map((d) => d.quantity)).toEqual([7]);
      await until(() => tracked() === 1);
    } finally {
      await app.close();
      await tracker.close({ timeoutMs: 0 }).catch(() => {});
    }
  });
});
