// The app server of the gate mode (`npm run bench -- --gate`, started by gate.mjs): one real framework
// app, Express 5 or Hono 4 on @hono/node-server, with the same route twice, without and with the gate,
// and the billing service it asks (the SDK's embedded mock, in this process: after the first request
// of each account every answer comes from the access cache, so the mock is idle while measured).
// Usage: node gate-app.mjs '{"framework":"express"|"hono"}'. Prints `{"port":N}` once listening;
// exits when its stdin closes (the parent died or is done).
//
//   GET /plain          the handler alone: `{"ok":true,"report":"monthly"}`
//   GET /noop           the same handler behind a middleware that does nothing but wait one
//                       microtask before going on: what any async middleware costs in this framework
//   GET /gated          the same handler behind the gate (need: an active pro-plan, tier pro)
//   GET /__bench/stats  control: this process's CPU time (µs) and the mock's status and resolve
//                       request counts, answered by the same framework
//
// Who asks comes from the `x-account` header and the e-mail from `x-email`, as a session would give them.
import { createGate } from 'billing-sdk';
import { GATE_NEED, GATE_TTL_MS, mockedAccess } from './gate-shared.mjs';

const { framework } = JSON.parse(process.argv[2] ?? '{}');

// Answers and links kept longer than the run: every measured request is answered from memory.
const { mock, billing, access } = await mockedAccess();

/** What the control route answers. */
function stats() {
  const { user, system } = process.cpuUsage();
  return {
    cpuUs: user + system,
    status: mock.requests.count({ method: 'GET', path: '/api/account/' }),
    resolve: mock.requests.count({ method: 'GET', path: '/api/resolve/public-url/' }),
  };
}

/** The route's own work, the same in both routes. */
const REPORT = { ok: true, report: 'monthly' };

/** Express 5 on node:http. @returns {Promise<import('node:http').Server>} */
async function expressApp() {
  const { default: express } = await import('express');
  const header = (req, name) => {
    const value = req.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const gate = createGate({
    billing,
    access,
    account: (req) => header(req, 'x-account'),
    paywall: { signingKey: mock.signingKey, email: (req) => header(req, 'x-email'), linkTtlMs: GATE_TTL_MS },
  });
  const app = express();
  const handler = (_req, res) => res.json(REPORT);
  app.get('/plain', handler);
  app.get(
    '/noop',
    (_req, _res, next) => {
      Promise.resolve().then(() => next());
    },
    handler,
  );
  app.get('/gated', gate.express(GATE_NEED), handler);
  app.get('/__bench/stats', (_req, res) => res.json(stats()));
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** Hono 4 on @hono/node-server. @returns {Promise<import('node:http').Server>} */
async function honoApp() {
  const { Hono } = await import('hono');
  const { serve } = await import('@hono/node-server');
  const gate = createGate({
    billing,
    access,
    account: (request) => request.headers.get('x-account') ?? undefined,
    paywall: {
      signingKey: mock.signingKey,
      email: (request) => request.headers.get('x-email') ?? undefined,
      linkTtlMs: GATE_TTL_MS,
    },
  });
  const app = new Hono();
  const handler = (c) => c.json(REPORT);
  app.get('/plain', handler);
  app.get(
    '/noop',
    async (_c, next) => {
      await next();
    },
    handler,
  );
  app.get('/gated', gate.hono(GATE_NEED), handler);
  app.get('/__bench/stats', (c) => c.json(stats()));
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(server));
  });
}

const apps = { express: expressApp, hono: honoApp };
if (!apps[framework])
  throw new Error(`framework must be ${Object.keys(apps).join(' or ')}, got ${framework}`);
const server = await apps[framework]();
process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);

// A safety net: a server left behind stops by itself.
setTimeout(() => process.exit(2), 30 * 60_000).unref();
process.stdin.on('data', () => {});
process.stdin.on('end', async () => {
  server.closeAllConnections?.();
  server.close();
  await access.close();
  await mock.close();
  process.exit(0);
});
