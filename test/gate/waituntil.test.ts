import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { type Context, Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createGate,
  createUsageTracker,
  type GateAllowed,
  type GateRequest,
  memorySpool,
  type UsageTracker,
} from '../../src/index.js';
import { fileSpool } from '../../src/node/index.js';
import type { Spool } from '../../src/tracker/spool.js';
import { serveNode, until, useMockServer } from '../helpers.js';
import { platform } from '../tracker/waituntil-platform.js';
import { A, gateOptions, PRO, setupFor, USAGE } from './helpers.js';

// The gate hands a route's usage to the platform's waitUntil by itself: the request's context
// (Cloudflare's `(request, env, ctx)`, Hono's `c.executionCtx`) or the gate's `waitUntil` option.
// The stand-in platform drops the instance (no tracker.close()) once what it was handed settled:
// every event must be recorded by then.
const mock = useMockServer();
let seeded = new Set<string>();
/** Usage events recorded since the test began. */
const events = () => mock.server.store.usageEvents.filter((e) => !seeded.has(e.event_key));
beforeEach(() => {
  seeded = new Set(mock.server.store.usageEvents.map((e) => e.event_key));
});

const dirs: string[] = [];
const trackers: UsageTracker[] = [];
afterEach(async () => {
  // Only to free the test's resources: every assertion was made before, on a dropped tracker.
  for (const tracker of trackers.splice(0)) await tracker.close({ timeoutMs: 0 }).catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const SPOOLS: { name: string; spool: () => Spool }[] = [
  { name: 'memory spool', spool: () => memorySpool() },
  {
    name: 'file spool',
    spool: () => {
      const dir = mkdtempSync(join(tmpdir(), 'billing-sdk-gate-waituntil-'));
      dirs.push(dir);
      return fileSpool(dir);
    },
  },
];

const NEED = [PRO, USAGE];
const request = () => new Request('http://app.test/r', { headers: { 'x-account': A } });
/** A gate over a fresh tracker; `extra` goes to createGate. */
function gateWith<Req extends GateRequest = Request>(
  spool: Spool,
  extra: { waitUntil?: (p: Promise<unknown>) => void } = {},
) {
  const setup = setupFor(mock.server);
  const tracker = createUsageTracker(setup.billing, { spool });
  trackers.push(tracker);
  return createGate<Req>({ ...gateOptions<Req>({ ...setup, tracker }), ...extra });
}

describe.each(SPOOLS)('gate and waitUntil with a $name', ({ spool }) => {
  it('protect called as (request, env, ctx): answers before the usage is sent; ctx.waitUntil keeps it until it is recorded', async () => {
    const gate = gateWith(spool());
    const handler = gate.protect(NEED, (_request: Request, _env: object, _ctx: unknown) =>
      Response.json({ ok: true }),
    );
    const contexts = Array.from({ length: 5 }, () => platform());
    const answers = await Promise.all(contexts.map((ctx) => handler(request(), {}, ctx)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // The answers came in microtasks after the handler: no request to the service could have finished.
    expect(events()).toHaveLength(0);
    // The platform sends each body; the route's usage follows its delivery.
    await Promise.all(answers.map((a) => a.text()));
    await Promise.all(contexts.map((ctx) => ctx.settled()));
    expect(contexts.map((ctx) => [ctx.handed > 0, ctx.rejected])).toEqual(contexts.map(() => [true, 0]));
    expect(events().map((e) => [e.account_ref_id, e.meter_code, e.quantity])).toEqual(
      Array.from({ length: 5 }, () => [A, 'api_calls', 1]),
    );
  });

  it('hono with c.executionCtx (middleware and wrapped handler): every event recorded once the context settled', async () => {
    const gate = gateWith(spool());
    const app = new Hono<{ Variables: { billing: GateAllowed } }>();
    const handler = (c: Context<{ Variables: { billing: GateAllowed } }>) =>
      c.json({ who: c.get('billing').account_ref_id });
    app.get('/m', gate.hono(NEED), handler);
    app.get('/w', gate.hono(NEED, handler));
    const contexts = [platform(), platform()];
    const answers = await Promise.all(
      ['/m', '/w'].map((path, i) =>
        app.fetch(
          new Request(`http://app.test${path}`, { headers: { 'x-account': A } }),
          {},
          {
            waitUntil: contexts[i]!.waitUntil,
            passThroughOnException: () => {},
            props: {},
          },
        ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(events()).toHaveLength(0);
    await Promise.all(answers.map((a) => a.text()));
    await Promise.all(contexts.map((ctx) => ctx.settled()));
    expect(contexts.map((ctx) => ctx.handed > 0)).toEqual([true, true]);
    expect(events()).toHaveLength(2);
  });
});

describe("createGate's waitUntil option", () => {
  it('protect without a context: the option is used', async () => {
    const ctx = platform();
    const gate = gateWith(memorySpool(), { waitUntil: ctx.waitUntil });
    const answer = await gate.protect(NEED, () => new Response('ok'))(request());
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('ok');
    await ctx.settled();
    expect(ctx.handed).toBeGreaterThan(0);
    expect(events()).toHaveLength(1);
  });

  it('a context of the request comes before the option', async () => {
    const option = platform();
    const ctx = platform();
    const gate = gateWith(memorySpool(), { waitUntil: option.waitUntil });
    const handler = gate.protect(
      NEED,
      (_request: Request, _env: object, _ctx: unknown) => new Response('ok'),
    );
    await (await handler(request(), {}, ctx)).text();
    await ctx.settled();
    expect([ctx.handed > 0, option.handed]).toEqual([true, 0]);
    expect(events()).toHaveLength(1);
  });

  it('express (Node): the option is handed the usage after the answer is sent', async () => {
    const ctx = platform();
    const gate = gateWith<express.Request>(memorySpool(), { waitUntil: ctx.waitUntil });
    const app = express();
    app.get('/r', gate.express(NEED), (_req, res) => void res.json({ ok: true }));
    const server = await serveNode(app);
    try {
      const answer = await fetch(`${server.url}/r`, { headers: { 'x-account': A } });
      expect(answer.status).toBe(200);
      await answer.text();
      // The usage starts on the response's 'finish', which may come after the client has the answer.
      await until(() => ctx.handed > 0);
      await ctx.settled();
      expect(events()).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('must be a function', () => {
    const setup = setupFor(mock.server);
    expect(() => createGate({ ...gateOptions(setup), waitUntil: 'yes' as never })).toThrow(
      /options\.waitUntil/,
    );
  });
});
