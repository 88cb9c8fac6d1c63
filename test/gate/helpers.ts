import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { type Context, Hono } from 'hono';
import { afterEach, expect } from 'vitest';
import {
  type AccessCache,
  type BillingClient,
  type CreditHolds,
  createAccessCache,
  createGate,
  type GateAllowed,
  type GateIdempotencyOptions,
  type GateNeed,
  type GateNeeds,
  type GateOptions,
  type GateRequest,
  type PaywallTarget,
  type UsageTracker,
  verifyHostedLink,
} from '../../src/index.js';
import { DEMO, type MockServer } from '../../src/testing/index.js';
import { clientFor, type LoopbackServer, serveNode } from '../helpers.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Where `gate.fastify` leaves an allowed decision. */
    billing?: GateAllowed;
  }
}

/** The seed's ids the gate tests use. */
export const A = DEMO.accounts.active;
export const PAST_DUE = DEMO.accounts.pastDue;
export const EMPTY = DEMO.accounts.empty;
export const AI = DEMO.products.aiAssistant.product_code;
export const GW = DEMO.products.apiGateway.product_code;
export const DEBIT_PATH = '/api/usage/credits/debit/';

/** A need whose quantity functions (if any) read any request a gate sees: fits every adapter. */
export type Need = GateNeed<GateRequest>;

/** An active pro-plan/pro subscription: acct_active has one, acct_past_due's is inactive. */
export const PRO: Need = { subscription: 'pro-plan', tier: 'pro' };
/** The export entitlement on ai-assistant: only acct_active has it. */
export const EXPORT: Need = {
  entitlement: { product_code: AI, entitlement_code: DEMO.entitlements.export },
};
/** An entitlement nobody has. */
export const SSO: Need = { entitlement: { product_code: AI, entitlement_code: 'sso' } };
/** `quantity` credits of ai-assistant (acct_active starts with 1000). */
export const credits = (quantity: number): Need => ({
  credits: { product_code: AI, meter_code: DEMO.meters.credits, quantity },
});
/** One api-gateway call, tracked after a 2xx answer. */
export const USAGE: Need = { usage: { product_code: GW, meter_code: DEMO.meters.apiCalls, quantity: 1 } };
/** The page the tests' `paywall.target` sells entitlements and credits on (a saas_only tier). */
export const ENTERPRISE: PaywallTarget = { subscription_name: 'pro-plan', tier_name: 'enterprise' };

/** A header of any request a gate sees: a Fetch `Headers` or Node's lower-case header object. */
export function header(request: GateRequest, name: string): string | undefined {
  const { headers } = request;
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined;
  const value = (headers as Readonly<Record<string, string | string[] | undefined>>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * What a test sets up of a gate, framework-neutral: the app's "session" is the `x-account` and
 * `x-email` headers of the request.
 */
export interface Setup {
  billing: BillingClient;
  access: AccessCache;
  account?: ((request: GateRequest) => string | undefined | Promise<string | undefined>) | undefined;
  /** `false`: no paywall option at all. Default: the signing key, the e-mail header, and no target. */
  paywall?: false | { target?: ((need: object) => PaywallTarget | undefined) | undefined } | undefined;
  onUnavailable?: 'closed' | 'open' | undefined;
  tracker?: UsageTracker | undefined;
  holds?: CreditHolds | undefined;
  onError?: ((error: unknown) => void) | undefined;
  /** The gate's `idempotency` option (a shared store, a fingerprint). */
  idempotency?: GateIdempotencyOptions<GateRequest> | undefined;
  signingKey: string;
}

/** The gate's options for a framework's own request type. */
export function gateOptions<Req extends GateRequest>(setup: Setup): GateOptions<Req> {
  const account = setup.account ?? ((request: GateRequest) => header(request, 'x-account'));
  const paywall = setup.paywall;
  return {
    billing: setup.billing,
    access: setup.access,
    account: (request: Req) => account(request),
    onUnavailable: setup.onUnavailable,
    tracker: setup.tracker,
    holds: setup.holds,
    onError: setup.onError && ((error: unknown) => setup.onError?.(error)),
    idempotency: setup.idempotency as GateIdempotencyOptions<Req> | undefined,
    paywall:
      paywall === false
        ? undefined
        : {
            signingKey: setup.signingKey,
            email: (request: Req) => header(request, 'x-email'),
            target: paywall?.target && ((need: GateNeed<Req>) => paywall.target?.(need)),
          },
  };
}

/** A client without retries (an outage is seen at once) and a fresh access cache on the mock. */
export function setupFor(server: MockServer, extra: Partial<Setup> = {}): Setup {
  const billing = clientFor(server, { maxRetries: 0 });
  return { billing, access: createAccessCache(billing), signingKey: server.signingKey, ...extra };
}

/** A gated route: `/r` (GET, HEAD, POST) answers `{ billing }`; the request's `x-status` and `x-throw` say how. */
export interface Route {
  need: GateNeeds<GateRequest>;
}

/** What the handler tells a hold it used: the request's `x-use`, when it has one. */
function use(request: GateRequest, decision: GateAllowed | null | undefined): void {
  const used = header(request, 'x-use');
  if (used !== undefined) decision?.hold?.use(Number(used));
}

/** Handlers of requests with `x-pause: <name>` wait until `pause(name)`'s resume is called. */
const pauses = new Map<string, Promise<void>>();

/** Holds the handlers of requests sent with `x-pause: name` until the returned function is called. */
export function pause(name: string): () => void {
  let resume = () => {};
  pauses.set(
    name,
    new Promise<void>((resolve) => {
      resume = resolve;
    }),
  );
  return () => {
    pauses.delete(name);
    resume();
  };
}

/** Waits while the request's pause (if any) holds. */
async function paused(request: GateRequest): Promise<void> {
  const name = header(request, 'x-pause');
  if (name !== undefined) await pauses.get(name);
}

/** How the handler answers the request: the status from `x-status` (200, 201, 404 or 500), or a throw (`x-throw`). */
function wanted(request: GateRequest): { status: 200 | 201 | 404 | 500; throws: boolean } {
  const status = header(request, 'x-status');
  return {
    status: status === '500' ? 500 : status === '201' ? 201 : status === '404' ? 404 : 200,
    throws: header(request, 'x-throw') !== undefined,
  };
}

/** A framework serving one gated route on loopback; `handled` counts the handler's runs. */
export interface Served extends LoopbackServer {
  readonly handled: number;
  /** Errors that reached the framework's own error path (which still answers as it does). */
  readonly errors: readonly unknown[];
}

/** One framework under test. */
export interface Framework {
  name: string;
  /** Whether its handler sees the decision (protect's Fetch handler is handed only the request). */
  seesDecision: boolean;
  serve(setup: Setup, route: Route): Promise<Served>;
}

/** The handler's answer body: the decision it saw (null when the framework hands it none). */
export interface Echo {
  billing: GateAllowed | null;
}

/** What a harness observes: the handler's runs, and the errors its framework's error path saw. */
function observer() {
  let handled = 0;
  const errors: unknown[] = [];
  return {
    errors,
    run: () => {
      handled += 1;
    },
    get handled() {
      return handled;
    },
  };
}

function served(server: LoopbackServer, seen: ReturnType<typeof observer>): Served {
  return {
    url: server.url,
    close: () => server.close(),
    errors: seen.errors,
    get handled() {
      return seen.handled;
    },
  };
}

/**
 * Express 5: `app.get(path, gate.express(need), handler)`, or wrapped, `app.get(path,
 * gate.express(need, handler))`; the decision at `res.locals.billing`.
 */
function expressFramework(wrapped: boolean): Framework {
  return {
    name: wrapped ? 'express (wrapped handler)' : 'express',
    seesDecision: true,
    async serve(setup, route) {
      const gate = createGate<express.Request>(gateOptions(setup));
      const count = observer();
      const app = express();
      const handler = async (req: express.Request, res: express.Response) => {
        count.run();
        await paused(req);
        const { status, throws } = wanted(req);
        const billing: GateAllowed | null = res.locals.billing ?? null;
        use(req, billing);
        if (throws) throw new Error('handler failed');
        res.status(status).json({ billing } satisfies Echo);
      };
      if (wrapped) app.all('/r', gate.express(route.need, handler));
      else app.all('/r', gate.express(route.need), handler);
      app.use((error: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
        count.errors.push(error);
        next(error);
      });
      return served(await serveNode(app), count);
    },
  };
}

/** Fastify 5: a route with `preHandler: gate.fastify(need)`; the decision at `request.billing`. */
const fastifyFramework: Framework = {
  name: 'fastify',
  seesDecision: true,
  async serve(setup, route) {
    const gate = createGate<FastifyRequest>(gateOptions(setup));
    const count = observer();
    const app = Fastify({ forceCloseConnections: true });
    app.setErrorHandler((error, _request, reply) => {
      count.errors.push(error);
      return reply.code(500).send({ error: 'Internal Server Error' });
    });
    app.route({
      method: ['GET', 'POST'],
      url: '/r',
      preHandler: gate.fastify(route.need),
      handler: async (request, reply) => {
        count.run();
        await paused(request);
        const { status, throws } = wanted(request);
        use(request, request.billing);
        if (throws) throw new Error('handler failed');
        return reply.code(status).send({ billing: request.billing ?? null } satisfies Echo);
      },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return served({ url: `http://127.0.0.1:${port}`, close: () => app.close() }, count);
  },
};

/** Listens with @hono/node-server: Hono's own Node adapter, also a Fetch handler's. */
export async function serveHono(
  fetch: (request: Request) => Response | Promise<Response>,
): Promise<LoopbackServer> {
  let listening: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => {
    listening = resolve;
  });
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info) => listening(info.port));
  return {
    url: `http://127.0.0.1:${await port}`,
    close: () =>
      new Promise<void>((resolve) => {
        if ('closeAllConnections' in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Hono 4 on @hono/node-server: `app.get(path, gate.hono(need), handler)`, or wrapped, `app.get(path,
 * gate.hono(need, handler))`; the decision at `c.get('billing')`.
 */
function honoFramework(wrapped: boolean): Framework {
  return {
    name: wrapped ? 'hono (wrapped handler)' : 'hono',
    seesDecision: true,
    async serve(setup, route) {
      const gate = createGate(gateOptions<Request>(setup));
      const count = observer();
      type Env = { Variables: { billing: GateAllowed } };
      const app = new Hono<Env>();
      const handler = async (c: Context<Env>) => {
        count.run();
        await paused(c.req.raw);
        const { status, throws } = wanted(c.req.raw);
        const billing = c.get('billing') ?? null;
        use(c.req.raw, billing);
        if (throws) throw new Error('handler failed');
        return c.json({ billing } satisfies Echo, status);
      };
      if (wrapped) app.on(['GET', 'POST'], '/r', gate.hono(route.need, handler));
      else app.on(['GET', 'POST'], '/r', gate.hono(route.need), handler);
      app.onError((error, c) => {
        count.errors.push(error);
        return c.text('Internal Server Error', 500);
      });
      return served(await serveHono(app.fetch), count);
    },
  };
}

/** `gate.protect(need, handler)`: a Fetch handler, served by @hono/node-server's `serve({ fetch })`. */
const protectFramework: Framework = {
  name: 'protect',
  seesDecision: false,
  async serve(setup, route) {
    const gate = createGate(gateOptions<Request>(setup));
    const count = observer();
    const handler = gate.protect(route.need, async (request: Request) => {
      count.run();
      await paused(request);
      const { status, throws } = wanted(request);
      use(request, gate.decisionOf(request));
      if (throws) throw new Error('handler failed');
      return Response.json({ billing: null } satisfies Echo, { status });
    });
    // What the Fetch platform gets: the handler's promise; a rejection is @hono/node-server's 500.
    const observed = async (request: Request) => {
      try {
        return await handler(request);
      } catch (error) {
        count.errors.push(error);
        throw error;
      }
    };
    return served(await serveHono(observed), count);
  },
};

/** Every adapter, each in its real framework. */
export const FRAMEWORKS: readonly Framework[] = [
  expressFramework(false),
  expressFramework(true),
  fastifyFramework,
  honoFramework(false),
  honoFramework(true),
  protectFramework,
];

/** How a test's client asks: which account, as a browser or an API client, with which key. */
export interface Ask {
  account?: string | undefined;
  email?: string | undefined;
  /** A browser navigation: `Accept: text/html…`. */
  browser?: boolean | undefined;
  method?: 'GET' | 'HEAD' | 'POST' | undefined;
  idempotencyKey?: string | undefined;
  /** The handler's status (`x-status`). */
  status?: 200 | 201 | 404 | 500 | undefined;
  /** The handler throws (`x-throw`). */
  throws?: boolean | undefined;
  /** Any other header. */
  headers?: Record<string, string> | undefined;
}

/** What came back: status, headers, and the body parsed when it is JSON. */
export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/** Sends one request to the gated route, following no redirect. */
export async function ask(server: LoopbackServer, how: Ask = {}): Promise<Answer> {
  const method = how.method ?? (how.browser ? 'GET' : 'POST');
  const headers = new Headers({
    accept: how.browser
      ? 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
      : 'application/json, application/problem+json',
    ...how.headers,
  });
  if (how.status !== undefined) headers.set('x-status', String(how.status));
  if (how.throws) headers.set('x-throw', '1');
  if (how.account !== undefined) headers.set('x-account', how.account);
  if (how.email !== undefined) headers.set('x-email', how.email);
  if (how.idempotencyKey !== undefined) headers.set('idempotency-key', how.idempotencyKey);
  if (method === 'POST') headers.set('content-type', 'application/json');
  const response = await fetch(`${server.url}/r`, {
    method,
    headers,
    body: method === 'POST' ? '{}' : undefined,
    redirect: 'manual',
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  const body: unknown = /json/.test(type) && text !== '' ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, body, text };
}

/** The decision the handler saw. */
export function echoed(answer: Answer): GateAllowed | null {
  return (answer.body as Echo).billing;
}

/**
 * Starts `framework`'s server for a test, closed after it: `start(route, extra)` on the mock of
 * `mock` (a fresh client and access cache each time).
 */
export function servers(
  framework: Framework,
  mock: { readonly server: MockServer },
): (route: Route, extra?: Partial<Setup>) => Promise<Served> {
  let open: Served[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
  });
  return async (route, extra = {}) => {
    const served = await framework.serve(setupFor(mock.server, extra), route);
    open.push(served);
    return served;
  };
}

/** An RFC 9457 answer of `status` for `reason`; its body. */
export function expectProblem(answer: Answer, status: number, reason: string): Record<string, unknown> {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
    reason,
  });
  return answer.body as Record<string, unknown>;
}

/** A hosted page of the mock: what it answers for a valid `u`. */
export interface HostedPage {
  page: 'tier' | 'product';
  id: string;
}

/** The pro-plan/pro tier page and the enterprise one (`ENTERPRISE`, the tests' `paywall.target`). */
export const PRO_PAGE: HostedPage = { page: 'tier', id: DEMO.tiers.proPro.tier_url_id };
export const ENTERPRISE_PAGE: HostedPage = { page: 'tier', id: DEMO.tiers.proEnterprise.tier_url_id };

/** A link on the mock's app whose `u` verifies with its signing key for `account`, and that its hosted page opens. */
export async function expectPaywall(
  server: MockServer,
  link: unknown,
  account: string,
  page: HostedPage,
): Promise<void> {
  expect(link).toEqual(expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/[pt]\/.*[?&]u=/));
  const url = String(link);
  expect(url.startsWith(server.appUrl)).toBe(true);
  expect((await verifyHostedLink(url, server.signingKey)).account_ref_id).toBe(account);
  const hosted = await fetch(url);
  expect(hosted.status).toBe(200);
  expect(await hosted.json()).toEqual({ ok: true, account_ref_id: account, ...page });
}
