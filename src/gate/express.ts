import { afterNode } from './after.js';
import type { GateRoute } from './route.js';
import type { GateAllowed, NodeMiddleware, NodeResponseLike } from './types.js';

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
    if (route.after) afterNode(route, req, decision, res, () => res.statusCode);
    return run();
  };
  // A throwing `account`, a dead socket or a throwing handler goes where Express sends any
  // middleware's error (Express 4 does not follow a rejected promise: it is never left to it).
  const gated = (req: Req, res: NodeResponseLike, next: NodeNext, run: () => unknown) =>
    route
      .decide(req)
      .then((d) => (d.allowed ? goOn(req, res, d, run) : writeNode(res, d.response)))
      .catch(next);
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
