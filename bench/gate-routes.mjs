// The gate mode's routes, one app per framework (used by gate-app.mjs over HTTP and by gate-child.mjs
// in process): the same route four ways, so that the gate's cost is the only difference.
//
//   GET /plain    the handler alone: who asks (the `x-account` header, as a route of a signed-in user
//                 reads its session), then `{"ok":true,"report":"monthly"}`
//   GET /noop     the same handler behind a middleware that does nothing but wait one microtask
//                 before going on: what any async middleware costs in this framework
//   GET /gated    the same route behind the gate as a middleware (need: an active pro-plan, tier
//                 pro): gate.express(need) / gate.hono(need), then the handler, who asks taken
//                 from the decision
//   GET /wrapped  the same, the handler wrapped: gate.express(need, handler) / gate.hono(need,
//                 handler), one handler in the framework's router
//
// Who asks comes from the `x-account` header and the e-mail from `x-email`, as a session would give them.
// Every route reads who asks once, as a route of a signed-in user reads its session: without the gate
// the handler reads it; behind the gate the gate's `account` (the app's own function) reads it and the
// handler takes it from the decision (`c.get('billing').account_ref_id`, `res.locals.billing`), as the
// guide shows. So the session read is the app's cost in both, and the gate's cost is the only
// difference. On @hono/node-server that read is what builds the request's `Headers` (a few µs).
import { createGate } from 'billing-sdk';
import { GATE_NEED, GATE_TTL_MS } from './gate-shared.mjs';

/** The route's own work, the same in every route. */
export const REPORT = { ok: true, report: 'monthly' };
const NOBODY = { ok: false };
/** The answer for who asks: every measured request names an account. */
const reportFor = (account) => (account ? REPORT : NOBODY);

/** Paths of the routes, in the order the reports show them. */
export const ROUTES = ['plain', 'noop', 'gated', 'wrapped'];

/** Express 5 with the routes (not listening), over the given mock, client and access cache. */
export async function expressRoutes({ mock, billing, access }) {
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
  const handler = (req, res) => res.json(reportFor(header(req, 'x-account')));
  const gatedHandler = (_req, res) => res.json(reportFor(res.locals.billing.account_ref_id));
  app.get('/plain', handler);
  app.get(
    '/noop',
    (_req, _res, next) => {
      Promise.resolve().then(() => next());
    },
    handler,
  );
  app.get('/gated', gate.express(GATE_NEED), gatedHandler);
  app.get('/wrapped', gate.express(GATE_NEED, gatedHandler));
  return app;
}

/** Hono 4 with the routes, over the given mock, client and access cache. */
export async function honoRoutes({ mock, billing, access }) {
  const { Hono } = await import('hono');
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
  const handler = (c) => c.json(reportFor(c.req.header('x-account')));
  const gatedHandler = (c) => c.json(reportFor(c.get('billing').account_ref_id));
  app.get('/plain', handler);
  app.get(
    '/noop',
    async (_c, next) => {
      await next();
    },
    handler,
  );
  app.get('/gated', gate.hono(GATE_NEED), gatedHandler);
  app.get('/wrapped', gate.hono(GATE_NEED, gatedHandler));
  return app;
}
