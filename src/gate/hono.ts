import { type GateRoute, isDecided, succeeded } from './route.js';
import type { GateAllowed, GateDecision, HonoContextLike, HonoMiddleware } from './types.js';

/** A Hono handler as the gate calls it. */
export type HonoHandler = (c: HonoContextLike) => Response | Promise<Response>;

/**
 * `gate.hono`: the route's middleware, or with `handler` the route's one handler (Hono runs a route
 * of one handler without its middleware chain). The decision goes to `c.get('billing')`; a "no" is
 * the gate's answer.
 *
 * The commonest request (allowed from memory, no usage to track) makes no closure and no promise
 * of the gate's own: the route's hot path is a few map lookups on top of the handler.
 */
export function honoAdapter<Req>(route: GateRoute<Req>, handler?: HonoHandler): HonoMiddleware | HonoHandler {
  const requestOf = (c: HonoContextLike) => c.req.raw as unknown as Req;
  /** After the route answered `status`: its usage, then the route's own answer. */
  const tracked = async <T>(c: HonoContextLike, decision: GateAllowed, ran: T, status: number) => {
    if (succeeded(status)) await route.track(requestOf(c), decision);
    return ran;
  };

  if (handler) {
    const run = (c: HonoContextLike, d: GateDecision): Response | Promise<Response> => {
      if (!d.allowed) return d.response;
      c.set('billing', d);
      // Without usage, the gate's answer is the handler's own: no async frame of its own.
      if (!route.tracksUsage) return handler(c);
      // `then` flattens the handler's promise, which TypeScript does not follow.
      return Promise.resolve(handler(c)).then((answer) => tracked(c, d, answer, answer.status));
    };
    return (c: HonoContextLike) => {
      const made = route.decide(requestOf(c));
      return isDecided(made) ? run(c, made) : made.then((d) => run(c, d));
    };
  }

  // Hono's `next()` resolves to nothing: the middleware's own answer is then `undefined`.
  const next = (
    c: HonoContextLike,
    go: () => Promise<void>,
    d: GateDecision,
  ): Promise<Response | undefined> => {
    if (!d.allowed) return Promise.resolve(d.response);
    c.set('billing', d);
    // After `next()`, the route's answer is at `c.res`.
    const went = go() as Promise<undefined>;
    return route.tracksUsage ? went.then(() => tracked(c, d, undefined, c.res.status)) : went;
  };
  return (c: HonoContextLike, go: () => Promise<void>) => {
    const made = route.decide(requestOf(c));
    return isDecided(made) ? next(c, go, made) : made.then((d) => next(c, go, d));
  };
}
