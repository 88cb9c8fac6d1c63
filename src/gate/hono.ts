import { after } from './after.js';
import { type GateRoute, waitUntilIn } from './route.js';
import type { HonoContextLike, HonoMiddleware } from './types.js';

/** A Hono handler as the gate calls it. */
export type HonoHandler = (c: HonoContextLike) => Response | Promise<Response>;

/**
 * `gate.hono`: the route's middleware, or with `handler` the route's one handler (Hono runs a route
 * of one handler without its middleware chain). The decision goes to `c.get('billing')`; a "no" is
 * the gate's answer.
 */
export function honoAdapter<Req>(route: GateRoute<Req>, handler?: HonoHandler): HonoMiddleware | HonoHandler {
  /** The decision, then `run` (the chain's `next()` or the handler), then the hold and the usage. */
  const gated = async <T>(c: HonoContextLike, run: () => T | Promise<T>, status: (ran: T) => number) => {
    const request = c.req.raw as unknown as Req;
    const decision = await route.decide(request);
    if (!decision.allowed) return decision.response;
    c.set('billing', decision);
    if (!route.after) return run();
    const waitUntil = waitUntilIn([() => c.executionCtx]) ?? route.waitUntil;
    return after(route, request, decision, waitUntil, run, status);
  };
  if (handler)
    return (c: HonoContextLike) =>
      gated(
        c,
        () => handler(c),
        (answer) => answer.status,
      );
  // Hono's `next()` resolves to nothing (the middleware's own answer), and the route's is then at `c.res`.
  return (c: HonoContextLike, next: () => Promise<void>) =>
    gated(c, next as () => Promise<undefined>, () => c.res.status);
}
