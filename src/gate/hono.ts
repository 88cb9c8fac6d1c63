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
  const waitUntilOf = (c: HonoContextLike) => waitUntilIn([() => c.executionCtx]) ?? route.waitUntil;
  if (handler) {
    return async (c: HonoContextLike) => {
      const request = c.req.raw as unknown as Req;
      const decision = await route.decide(request);
      if (!decision.allowed) return decision.response;
      c.set('billing', decision);
      if (!route.hasWorkAfter) return handler(c);
      return after(route, request, decision, waitUntilOf(c), () => handler(c));
    };
  }
  return async (c: HonoContextLike, next: () => Promise<void>): Promise<Response | undefined> => {
    // A preflight is never an action: it goes through undecided, and is never charged.
    if (c.req.raw.method === 'OPTIONS') {
      await next();
      return undefined;
    }
    const request = c.req.raw as unknown as Req;
    const decision = await route.decide(request);
    if (!decision.allowed) return decision.response;
    c.set('billing', decision);
    if (!route.hasWorkAfter) {
      await next();
      return undefined;
    }
    // Hono's `next()` resolves to nothing: the route's answer is then at `c.res`, and its wrapped body goes back there.
    const answer = await after(route, request, decision, waitUntilOf(c), async () => {
      await next();
      return c.res;
    });
    if (answer !== c.res) c.res = answer;
    return undefined;
  };
}
