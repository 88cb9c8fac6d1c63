import { check, checkOptions, func, integer, oneOf, type Rule, required, text } from '../internal/checks.js';
import { safely } from '../util/safely.js';
import { after, keepNodeAnswer, watchNode } from './after.js';
import { cachedNeeds } from './check-needs-cache.js';
import { decide, type Then } from './decide.js';
import type { Decider } from './decider.js';
import { expressAdapter, type NodeHandler, type NodeNext } from './express.js';
import { RouteHold } from './hold.js';
import { type HonoHandler, honoAdapter } from './hono.js';
import { idempotencyOf, KeyClaim } from './idempotency.js';
import { PaywallLinks } from './links.js';
import { type CheckedNeeds, checkNeeds, quantityOf } from './needs.js';
import { type GateRoute, succeeded, type WaitUntil, waitUntilIn } from './route.js';
import { stateHandler } from './state.js';
import type {
  Gate,
  GateAllowed,
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
  holds: [methods(['reserve', 'invalidate'], 'credit holds (createCreditHolds)')],
  onError: [func],
  waitUntil: [func],
  idempotency: [
    (v: unknown) =>
      typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : 'must be an object',
  ],
} satisfies Record<keyof GateOptions, Rule[]>;

const paywallRules = {
  signingKey: [required, text],
  email: [func],
  target: [func],
  linkTtlMs: [integer(1)],
};

/** The route's usage, handed to the tracker (a refusal goes to `onError` by the caller; the answer stands). */
function trackUsage<Req extends GateRequest>(
  tracker: GateOptions<Req>['tracker'],
  needs: CheckedNeeds<Req>,
  request: Req,
  allowed: GateAllowed,
  waitUntil: WaitUntil | undefined,
): Promise<unknown> {
  return Promise.all(
    needs.usage.map(async (usage) => {
      const quantity = await quantityOf(usage.quantity, request, 'need.usage.quantity');
      const { product_code, meter_code } = usage;
      await tracker?.track(
        { account_ref_id: allowed.account_ref_id, product_code, meter_code, quantity },
        waitUntil && { waitUntil },
      );
    }),
  );
}

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
    keys: idempotencyOf(given.idempotency),
    renewClaims: true,
  };
  // gate.check's caller marks its key's claim itself: nothing renews it past claimTtlMs.
  const checker: Decider<Req> = { ...decider, renewClaims: false };
  const checked = (operation: string, need: GateNeeds<Req>) =>
    checkNeeds<Req>(
      `gate.${operation}`,
      need,
      given.tracker !== undefined,
      given.holds !== undefined,
      given.access,
    );

  /**
   * After the answer (`status` undefined: the handler threw or the connection closed first): the
   * hold settled after a 2xx, else released; the usage after a 2xx; the `Idempotency-Key`'s claim
   * used up by an answer below 500, else freed for the retry. A failure goes to `onError`
   * (the answer stands). With `waitUntil`, the whole of it is handed to it, and each usage event's
   * send is, by the tracker.
   */
  const finish = (
    needs: CheckedNeeds<Req>,
    request: Req,
    allowed: GateAllowed,
    status: number | undefined,
    waitUntil: WaitUntil | undefined,
  ): Promise<void> => {
    const ok = status !== undefined && succeeded(status);
    const report = (error: unknown) => safely(() => given.onError?.(error, request));
    const steps: Promise<unknown>[] = [];
    if (allowed.hold instanceof RouteHold) steps.push(allowed.hold.close(ok).catch(report));
    if (ok && needs.usage.length)
      steps.push(trackUsage(given.tracker, needs, request, allowed, waitUntil).catch(report));
    if (allowed.idempotency instanceof KeyClaim) steps.push(allowed.idempotency.close(status).catch(report));
    const done = Promise.all(steps).then(() => {});
    try {
      waitUntil?.(done);
    } catch (error) {
      void report(error); // the platform refused it: the work goes on all the same
    }
    return done;
  };
  /** `gate.check`'s needs, checked and prepared once per need object (see check-needs-cache.ts). */
  const checkedForCheck = cachedNeeds((need: GateNeeds<Req>) => checked('check', need));
  /** The decisions of requests allowed through protect, for `decisionOf`; gone with the request. */
  const decisions = new WeakMap<object, GateAllowed>();
  /** A route of `need` (checked now, so a typo fails at start-up) for one adapter. */
  const routeOf = (operation: string, need: GateNeeds<Req>): GateRoute<Req> => {
    const needs = checked(operation, need);
    return {
      // Credits: the claim of a request's Idempotency-Key is marked by the answer (gate/idempotency.ts).
      hasWorkAfter: needs.usage.length > 0 || needs.credits.length > 0,
      waitUntil: given.waitUntil,
      decide: <T>(request: Req, then?: Then<T>) => decide(decider, request, needs, then),
      finish: (request, allowed, status, waitUntil = given.waitUntil) =>
        finish(needs, request, allowed, status, waitUntil),
    };
  };

  function hono(need: GateNeeds<Req>): HonoMiddleware;
  function hono<C extends HonoContextLike, R extends Response | Promise<Response>>(
    need: GateNeeds<Req>,
    handler: (c: C) => R,
  ): (c: C) => Promise<Awaited<R> | Response>;
  function hono(need: GateNeeds<Req>, handler?: HonoHandler) {
    return honoAdapter(routeOf('hono', need), handler);
  }

  function express(need: GateNeeds<Req>): NodeMiddleware<Req>;
  function express<Res extends NodeResponseLike, N extends NodeNext>(
    need: GateNeeds<Req>,
    handler: (req: Req, res: Res, next: N) => unknown,
  ): (req: Req, res: Res, next: N) => unknown;
  function express(need: GateNeeds<Req>, handler?: NodeHandler<Req>) {
    return expressAdapter(routeOf('express', need), handler);
  }

  return {
    async check(request, need) {
      const decision = await decide(checker, request, checkedForCheck(need));
      // No adapter follows this request: its hold is the caller's to settle, and `use` says so.
      if (decision.allowed && decision.hold instanceof RouteHold) decision.hold.leaveToCaller();
      return decision;
    },

    decisionOf(request) {
      return decisions.get(request);
    },

    protect(need, handler) {
      const route = routeOf('protect', need);
      return async (request, ...rest) => {
        const decision = await route.decide(request);
        if (!decision.allowed) return decision.response;
        decisions.set(request, decision);
        if (!route.hasWorkAfter) return handler(request, ...rest);
        // Cloudflare's (request, env, ctx), Netlify's (request, context): the request's own first.
        const waitUntil = waitUntilIn(rest.map((arg) => () => arg)) ?? route.waitUntil;
        return after(route, request, decision, waitUntil, () => handler(request, ...rest));
      };
    },

    hono,

    express,

    state: (view) => stateHandler(given, decider.links, view),

    fastify(need) {
      const route = routeOf('fastify', need);
      return async (request, reply) => {
        // A preflight is never an action: it goes through undecided, and is never charged.
        if (request.method === 'OPTIONS') return undefined;
        // Watched from the start: a client that leaves while the gate decides frees its hold at once.
        const watch = route.hasWorkAfter
          ? watchNode(route, request, reply.raw, () => reply.statusCode)
          : undefined;
        const decision = await route.decide(request);
        if (!decision.allowed) {
          reply.code(decision.status);
          decision.response.headers.forEach((value, name) => void reply.header(name, value));
          // Returning the reply tells Fastify the answer is sent: no later hook or handler runs.
          return reply.send(await decision.response.text());
        }
        (request as Req & { billing?: GateAllowed }).billing = decision;
        if (watch && !watch.allowed(decision)) {
          // The client is gone (its hold released): the reply is taken over, so no handler runs for nobody.
          reply.hijack?.();
          return reply;
        }
        keepNodeAnswer(reply.raw, decision);
        return undefined;
      };
    },
  } satisfies Gate<Req>;
}
