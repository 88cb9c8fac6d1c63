import type { Then } from './decide.js';
import type { GateAllowed, GateDecision } from './types.js';

/** A platform's `waitUntil`: keeps the function or isolate alive until `promise` settles. */
export type WaitUntil = (promise: Promise<unknown>) => void;

/**
 * One gated route as its adapter sees it: the decision for a request and, after the answer, the
 * route's hold and usage. Made by `createGate` per adapter call, once the route's needs were checked.
 */
export interface GateRoute<Req> {
  /**
   * Whether the route has work once its answer is known: usage to track, a hold to settle, an
   * `Idempotency-Key`'s claim to mark (routes with `usage` or `credits`; most routes: no, and their
   * adapters watch nothing).
   */
  readonly hasWorkAfter: boolean;
  /** The gate's `waitUntil` option: what an adapter uses when the request brings none. */
  readonly waitUntil: WaitUntil | undefined;
  /** The decision (see decide), or what `then` makes of it, run in the turn it is made. */
  decide(request: Req): Promise<GateDecision>;
  decide<T>(request: Req, then: Then<T>): Promise<T>;
  /**
   * After the answer with `status` (`undefined`: the handler threw, or the connection closed before
   * an answer): the hold settled after a 2xx and released otherwise, the usage tracked after a 2xx;
   * a failure goes to `onError`, never rejects. `waitUntil` (the request's, or the gate's option)
   * is handed the promise, and passed to the tracker for each event.
   */
  finish(
    request: Req,
    allowed: GateAllowed,
    status: number | undefined,
    waitUntil?: WaitUntil,
  ): Promise<void>;
}

/**
 * The platform's `waitUntil` among what a handler was called with (Cloudflare's `(request, env,
 * ctx)`, Netlify's `(request, context)`, Hono's `c.executionCtx`): the first object that has one,
 * called on it. `contexts` are read lazily: Hono's `executionCtx` throws where there is none.
 */
export function waitUntilIn(contexts: readonly (() => unknown)[]): WaitUntil | undefined {
  for (const context of contexts) {
    let ctx: { waitUntil?: unknown } | undefined;
    try {
      ctx = context() as { waitUntil?: unknown } | undefined;
    } catch {
      continue;
    }
    if (typeof ctx === 'object' && ctx !== null && typeof ctx.waitUntil === 'function') {
      const found = ctx as { waitUntil: WaitUntil };
      return (promise) => found.waitUntil(promise);
    }
  }
  return undefined;
}

/** A 2xx status: the answers after which usage is tracked. */
export const succeeded = (status: number): boolean => status >= 200 && status < 300;
