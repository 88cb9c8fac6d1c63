import { check, checkOptions, func, integer, oneOf, type Rule, required, text } from '../internal/checks.js';
import { safely } from '../util/safely.js';
import { type Decider, decide } from './decide.js';
import { PaywallLinks } from './links.js';
import { type CheckedNeeds, checkNeeds, quantityOf } from './needs.js';
import type {
  Gate,
  GateAllowed,
  GateDecision,
  GateNeeds,
  GateOptions,
  GateRequest,
  HonoContextLike,
  HonoMiddleware,
  NodeMiddleware,
  NodeResponseLike,
} from './types.js';

const OPERATION = 'createGate';
const DEFAULT_LINK_TTL_MS = 60_000;

/** An object whose methods at these paths (`'usage.debit'`) are functions: what the gate calls. */
const methods =
  (paths: string[], what: string): Rule =>
  (v) =>
    paths.every(
      (path) =>
        typeof path
          .split('.')
          .reduce<unknown>((o, key) => (o as Record<string, unknown> | null)?.[key], v) === 'function',
    )
      ? undefined
      : `must be ${what}`;

const rules = {
  billing: [required, methods(['usage.debit', 'resolve.signedUrl'], 'a BillingClient')],
  access: [required, methods(['isActive', 'hasEntitlement'], 'an access cache (createAccessCache)')],
  account: [required, func],
  paywall: [
    (v: unknown) =>
      typeof v === 'object' && v !== null && !Array.isArray(v)
        ? undefined
        : 'must be an object with signingKey',
  ],
  onUnavailable: [oneOf(['closed', 'open'])],
  tracker: [methods(['track'], 'a usage tracker (createUsageTracker)')],
  onError: [func],
} satisfies Record<keyof GateOptions, Rule[]>;

const paywallRules = {
  signingKey: [required, text],
  email: [func],
  target: [func],
  linkTtlMs: [integer(1)],
};

/**
 * A route's billing decision in one call, for any framework: who asks (your `account`), may they
 * (subscription and entitlement from the access cache, credits debited once per client request),
 * and where a "no" goes (a browser to the signed paywall, an API client a problem document).
 *
 * @param options - See {@link GateOptions}.
 * @throws {@link InvalidRequestError} naming each bad option.
 * @example
 * ```ts
 * import express from 'express';
 * import { BillingClient, createAccessCache, createGate } from 'billing-sdk';
 *
 * const billing = new BillingClient();
 * const gate = createGate<express.Request>({
 *   billing,
 *   access: createAccessCache(billing),
 *   account: (req) => req.get('x-account-id'),
 *   paywall: { signingKey: process.env.BILLING_SIGNING_KEY! },
 * });
 * const app = express();
 * app.get('/reports', gate.express({ subscription: 'pro-plan', tier: 'pro' }), (_req, res) => {
 *   res.json({ account: res.locals.billing.account_ref_id });
 * });
 * ```
 */
export function createGate<Req extends GateRequest = Request>(options: GateOptions<Req>): Gate<Req> {
  const given = checkOptions(OPERATION, options, rules) as unknown as GateOptions<Req>;
  if (given.paywall) check(OPERATION, given.paywall, paywallRules, undefined, 'options.paywall.');
  const { paywall } = given;
  const decider: Decider<Req> = {
    options: given,
    links: paywall
      ? new PaywallLinks(given.billing, paywall.signingKey, paywall.linkTtlMs ?? DEFAULT_LINK_TTL_MS)
      : undefined,
  };
  const checked = (operation: string, need: GateNeeds<Req>) =>
    checkNeeds<Req>(`gate.${operation}`, need, given.tracker !== undefined);

  /** After a 2xx answer: the route's usage, told to `onError` when the tracker refuses it (the answer stands). */
  const track = (needs: CheckedNeeds<Req>, request: Req, allowed: GateAllowed): Promise<void> =>
    Promise.all(
      needs.usage.map(async (usage) => {
        try {
          const quantity = await quantityOf(usage.quantity, request, 'need.usage.quantity');
          const { product_code, meter_code } = usage;
          await given.tracker?.track({
            account_ref_id: allowed.account_ref_id,
            product_code,
            meter_code,
            quantity,
          });
        } catch (error) {
          await safely(() => given.onError?.(error, request));
        }
      }),
    ).then(() => {});
  const ok = (status: number) => status >= 200 && status < 300;
  /** The decisions of requests allowed through protect, for `decisionOf`; gone with the request. */
  const decisions = new WeakMap<object, GateAllowed>();

  function hono(need: GateNeeds<Req>): HonoMiddleware;
  function hono<C extends HonoContextLike, R extends Response | Promise<Response>>(
    need: GateNeeds<Req>,
    handler: (c: C) => R,
  ): (c: C) => R | Response | Promise<Response>;
  function hono(need: GateNeeds<Req>, handler?: (c: HonoContextLike) => Response | Promise<Response>) {
    const needs = checked('hono', need);
    /**
     * An allowed request goes on: `run` is the chain's `next()` or the route's own handler, and
     * `status` reads the route's answer once it ran (after `next()`, Hono's is at `c.res`).
     */
    const goOn = <T>(
      c: HonoContextLike,
      decision: GateAllowed,
      run: () => T,
      status: (ran: Awaited<T>) => number,
    ) => {
      c.set('billing', decision);
      // Without usage, the gate's answer is the route's own: no async frame of its own.
      if (!needs.usage.length) return run();
      const request = c.req.raw as unknown as Req;
      return Promise.resolve(run()).then(async (ran) => {
        if (ok(status(ran))) await track(needs, request, decision);
        return ran;
      });
    };
    const gated = <T>(c: HonoContextLike, run: () => T, status: (ran: Awaited<T>) => number) => {
      const made = decide(decider, c.req.raw as unknown as Req, needs);
      const on = (d: GateDecision) => (d.allowed ? goOn(c, d, run, status) : d.response);
      return isDecided(made) ? on(made) : made.then(on);
    };
    // One handler: Hono runs a route of one handler without its middleware chain.
    if (handler)
      return (c: HonoContextLike) =>
        gated(
          c,
          () => handler(c),
          (answer) => answer.status,
        );
    return (c: HonoContextLike, next: () => Promise<void>) =>
      Promise.resolve(gated(c, next, () => c.res.status)) as Promise<Response | undefined>;
  }

  function express(need: GateNeeds<Req>): NodeMiddleware<Req>;
  function express<Res extends NodeResponseLike, N extends Next>(
    need: GateNeeds<Req>,
    handler: (req: Req, res: Res, next: N) => unknown,
  ): (req: Req, res: Res, next: N) => unknown;
  function express(need: GateNeeds<Req>, handler?: (req: Req, res: NodeResponseLike, next: Next) => unknown) {
    const needs = checked('express', need);
    /** An allowed request goes on: `run` is the chain's `next()` or the route's own handler. */
    const goOn = (req: Req, res: NodeResponseLike, decision: GateAllowed, run: () => unknown) => {
      res.locals ??= {};
      res.locals.billing = decision;
      if (needs.usage.length) {
        res.once('finish', () => {
          if (ok(res.statusCode)) void track(needs, req, decision);
        });
      }
      return run();
    };
    const gated = (req: Req, res: NodeResponseLike, next: Next, run: () => unknown) => {
      // A throwing `account` (or a dead socket) goes where Express sends any middleware's error.
      let made: ReturnType<typeof decide>;
      try {
        made = decide(decider, req, needs);
      } catch (error) {
        return next(error);
      }
      const on = (d: GateDecision) =>
        d.allowed ? goOn(req, res, d, run) : void writeNode(res, d.response).catch(next);
      // Decided at once, the handler's own return (and throw) is Express's to handle, as without the gate.
      return isDecided(made) ? on(made) : made.then(on).catch(next);
    };
    // One handler: one layer fewer in Express's router.
    if (handler)
      return (req: Req, res: NodeResponseLike, next: Next) =>
        gated(req, res, next, () => handler(req, res, next));
    return (req: Req, res: NodeResponseLike, next: Next) => void gated(req, res, next, next);
  }

  return {
    async check(request, need) {
      return decide(decider, request, checked('check', need));
    },

    decisionOf(request) {
      return decisions.get(request);
    },

    protect(need, handler) {
      const needs = checked('protect', need);
      return async (request, ...rest) => {
        const made = decide(decider, request, needs);
        const decision = isDecided(made) ? made : await made;
        if (!decision.allowed) return decision.response;
        decisions.set(request, decision);
        const response = await handler(request, ...rest);
        if (needs.usage.length && ok(response.status)) await track(needs, request, decision);
        return response;
      };
    },

    hono,

    express,

    fastify(need) {
      const needs = checked('fastify', need);
      return async (request, reply) => {
        const decision = await decide(decider, request, needs);
        if (!decision.allowed) {
          reply.code(decision.status);
          decision.response.headers.forEach((value, name) => void reply.header(name, value));
          // Returning the reply tells Fastify the answer is sent: no later hook or handler runs.
          return reply.send(await decision.response.text());
        }
        (request as Req & { billing?: GateAllowed }).billing = decision;
        if (needs.usage.length) {
          reply.raw.once('finish', () => {
            if (ok(reply.statusCode)) void track(needs, request, decision);
          });
        }
        return undefined;
      };
    },
  } satisfies Gate<Req>;
}

/** Express's `next`. */
type Next = (error?: unknown) => void;

/** A decision made without a promise (see decide). */
function isDecided(decision: GateDecision | Promise<GateDecision>): decision is GateDecision {
  return typeof (decision as Promise<GateDecision>).then !== 'function';
}

/** Writes a gate's Fetch answer to Node's response (Express, Connect, node:http). */
async function writeNode(res: NodeResponseLike, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = await response.text();
  res.writeHead(response.status, headers);
  res.end(body);
}
