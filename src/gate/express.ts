import { type GateRoute, isDecided, succeeded } from './route.js';
import type { GateAllowed, GateDecision, NodeMiddleware, NodeResponseLike } from './types.js';

/** Express's `next`. */
export type NodeNext = (error?: unknown) => void;

/** An Express handler as the gate calls it. */
export type NodeHandler<Req> = (req: Req, res: NodeResponseLike, next: NodeNext) => unknown;

/**
 * `gate.express`: the route's middleware (Express, Connect, node:http), or with `handler` the
 * route's one handler (one layer fewer in Express's router). The decision goes to
 * `res.locals.billing`; a "no" is the gate's answer.
 */
export function expressAdapter<Req>(
  route: GateRoute<Req>,
  handler?: NodeHandler<Req>,
): NodeMiddleware<Req> | NodeHandler<Req> {
  /** An allowed request goes on: `run` is the chain's `next()` or the route's own handler. */
  const goOn = (req: Req, res: NodeResponseLike, decision: GateAllowed, run: () => unknown) => {
    res.locals ??= {};
    res.locals.billing = decision;
    if (route.tracksUsage) {
      res.once('finish', () => {
        if (succeeded(res.statusCode)) void route.track(req, decision);
      });
    }
    return run();
  };
  const gated = (req: Req, res: NodeResponseLike, next: NodeNext, run: () => unknown) => {
    // A throwing `account` (or a dead socket) goes where Express sends any middleware's error.
    let made: ReturnType<GateRoute<Req>['decide']>;
    try {
      made = route.decide(req);
    } catch (error) {
      return next(error);
    }
    const on = (d: GateDecision) =>
      d.allowed ? goOn(req, res, d, run) : void writeNode(res, d.response).catch(next);
    // Decided at once, the handler's own return (and throw) is Express's to handle, as without the gate.
    return isDecided(made) ? on(made) : made.then(on).catch(next);
  };
  if (handler) return (req, res, next) => gated(req, res, next, () => handler(req, res, next));
  return (req, res, next) => void gated(req, res, next, next);
}

/** Writes a gate's Fetch answer to Node's response (Express, Connect, node:http). */
export async function writeNode(res: NodeResponseLike, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = await response.text();
  res.writeHead(response.status, headers);
  res.end(body);
}
