import { keepNodeAnswer, watchNode } from './after.js';
import type { GateRoute } from './route.js';
import type { NodeMiddleware, NodeResponseLike } from './types.js';

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
  // A throwing `account`, a dead socket or a throwing handler goes where Express sends any
  // middleware's error (Express 4 does not follow a rejected promise: it is never left to it).
  const gated = (req: Req, res: NodeResponseLike, next: NodeNext, run: () => unknown) => {
    // Watched from the start: a client that leaves while the gate decides frees its hold at once.
    const watch = route.hasWorkAfter ? watchNode(route, req, res, () => res.statusCode) : undefined;
    return route
      .decide(req, (d) => {
        if (!d.allowed) return writeNode(res, d.response);
        res.locals ??= {};
        res.locals.billing = d;
        // The client is gone: the hold was released, and no handler works for nobody.
        if (watch && !watch.allowed(d)) return undefined;
        keepNodeAnswer(res, d);
        return run();
      })
      .catch(next);
  };
  if (handler) return (req, res, next) => gated(req, res, next, () => handler(req, res, next));
  return (req, res, next) => {
    // A preflight is never an action: it goes through undecided, and is never charged.
    if ((req as { method?: string }).method === 'OPTIONS') return next();
    void gated(req, res, next, next);
  };
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
