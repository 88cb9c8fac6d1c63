import type { GateAllowed, GateDecision } from './types.js';

/** A platform's `waitUntil`: keeps the function or isolate alive until `promise` settles. */
export type WaitUntil = (promise: Promise<unknown>) => void;

/**
 * One gated route as its adapter sees it: the decision for a request and, after a 2xx answer, the
 * route's usage. Made by `createGate` per adapter call, once the route's needs were checked.
 */
export interface GateRoute<Req> {
  /** Whether the need declares usage to track (most routes do not: no work after the answer). */
  readonly tracksUsage: boolean;
  /** The gate's `waitUntil` option: what an adapter uses when the request brings none. */
  readonly waitUntil: WaitUntil | undefined;
  /** The decision (see decide). */
  decide(request: Req): Promise<GateDecision>;
  /**
   * After a 2xx answer: the route's usage; a tracker's refusal goes to `onError`, never rejects.
   * `waitUntil` (the request's, or the gate's option) is handed the promise, and passed to the
   * tracker for each event.
   */
  track(request: Req, allowed: GateAllowed, waitUntil?: WaitUntil): Promise<void>;
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
