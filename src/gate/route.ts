import type { GateAllowed, GateDecision } from './types.js';

/**
 * One gated route as its adapter sees it: the decision for a request and, after a 2xx answer, the
 * route's usage. Made by `createGate` per adapter call, once the route's needs were checked.
 */
export interface GateRoute<Req> {
  /** Whether the need declares usage to track (most routes do not: no work after the answer). */
  readonly tracksUsage: boolean;
  /** The decision (see decide). */
  decide(request: Req): Promise<GateDecision>;
  /** After a 2xx answer: the route's usage; a tracker's refusal goes to `onError`, never rejects. */
  track(request: Req, allowed: GateAllowed): Promise<void>;
}

/** A 2xx status: the answers after which usage is tracked. */
export const succeeded = (status: number): boolean => status >= 200 && status < 300;
