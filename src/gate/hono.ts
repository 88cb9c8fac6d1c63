import { type GateRoute, isDecided, succeeded } from './route.js';
import type { GateAllowed, GateDecision, HonoContextLike, HonoMiddleware } from './types.js';

/** A Hono handler as the gate calls it. */
export type HonoHandler = (c: HonoContextLike) => Response | Promise<Response>;

/**
 * `gate.hono`: the route's middleware, or with `handler` the route's one handler (Hono runs a route
 * of one handler without its middleware chain). The decision goes to `c.get('billing')`; a "no" is
 * the gate's answer.
 */
export function honoAdapter<Req>(route: GateRoute<Req>, handler?: HonoHandler): HonoMiddleware | HonoHandler {
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
    if (!route.tracksUsage) return run();
    const request = c.req.raw as unknown as Req;
    return Promise.resolve(run()).then(async (ran) => {
      if (succeeded(status(ran))) await route.track(request, decision);
      return ran;
    });
  };
  const gated = <T>(c: HonoContextLike, run: () => T, status: (ran: Awaited<T>) => number) => {
    const made = route.decide(c.req.raw as unknown as Req);
    const on = (d: GateDecision) => (d.allowed ? goOn(c, d, run, status) : d.response);
    return isDecided(made) ? on(made) : made.then(on);
  };
  if (handler) {
    // A promise's `then` flattens the handler's promise, which TypeScript does not follow.
    return (c: HonoContextLike) =>
      gated(
        c,
        () => handler(c),
        (answer) => answer.status,
      ) as Response | Promise<Response>;
  }
  return (c: HonoContextLike, next: () => Promise<void>) =>
    Promise.resolve(gated(c, next, () => c.res.status)) as Promise<Response | undefined>;
}
