import type { GateRoute, WaitUntil } from './route.js';
import type { GateAllowed } from './types.js';

/**
 * Runs an allowed request's handler, then the route's work after the answer (its hold, its usage)
 * with the status (none when the handler threw: the hold is released, and the throw goes on). The
 * Fetch-shaped adapters (`protect`, `hono`) share it. Handed to the platform's `waitUntil`, that work
 * does not hold up the answer; without one, the answer waits for it (a serverless platform may
 * freeze the process as soon as it is sent).
 */
export async function after<Req, T>(
  route: GateRoute<Req>,
  request: Req,
  decision: GateAllowed,
  waitUntil: WaitUntil | undefined,
  run: () => T | Promise<T>,
  status: (ran: T) => number,
): Promise<T> {
  let ran: T;
  try {
    ran = await run();
  } catch (error) {
    const done = route.finish(request, decision, undefined, waitUntil);
    if (!waitUntil) await done;
    throw error;
  }
  const done = route.finish(request, decision, status(ran), waitUntil);
  if (!waitUntil) await done;
  return ran;
}

/** What Node's response (Express, Fastify's `reply.raw`) tells of its end. */
interface NodeEnd {
  once(event: 'finish' | 'close', listener: () => void): unknown;
}

/**
 * The route's work after a Node response (Express, Connect, Fastify): with its status once it was
 * sent; with none when the connection closed first (the client went away: the hold is released).
 */
export function afterNode<Req>(
  route: GateRoute<Req>,
  request: Req,
  decision: GateAllowed,
  res: NodeEnd,
  status: () => number,
): void {
  let sent = false;
  res.once('finish', () => {
    sent = true;
    void route.finish(request, decision, status());
  });
  res.once('close', () => {
    if (!sent) void route.finish(request, decision, undefined);
  });
}
