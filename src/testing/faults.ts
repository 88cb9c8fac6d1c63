import { methodMatches, pathMatches } from './matching.js';

/**
 * A failure to inject into matching `/api/` requests. Combine fields: `delayMs` runs first; then
 * `reset` wins over `status`; with neither, the real handler answers after the delay.
 */
export interface Fault {
  /** HTTP method to match (case-insensitive); all methods when omitted. */
  method?: string;
  /** Pathname to match: a string is a prefix (e.g. `'/api/invoices/'`), a RegExp is tested. */
  path?: string | RegExp;
  /** How many matching requests this fault affects; default 1, `Infinity` allowed. */
  times?: number;
  /** Answer this status instead of running the handler (nothing changes in the store). */
  status?: number;
  /** Extra response headers of a status fault, e.g. `{ 'retry-after': '1' }`. */
  headers?: Record<string, string>;
  /** Raw body of a status fault; default a JSON body of the service's shape for that status. */
  body?: string;
  /** Wait this long before handling; if the client goes away meanwhile, nothing is handled. */
  delayMs?: number;
  /**
   * Drop the connection without answering. `'before'`: the handler never runs (no state change).
   * `'after'`: the handler runs and commits its change, then the answer is lost.
   */
  reset?: 'before' | 'after';
}

interface ActiveFault {
  fault: Fault;
  remaining: number;
}

/**
 * The queue of injected faults. Each request consumes at most one fault: the first added that
 * matches and still has uses left.
 */
export class MockFaults {
  #active: ActiveFault[] = [];

  /** Queues a fault; throws on a `times` or `delayMs` that could never make sense. */
  add(fault: Fault): void {
    const times = fault.times ?? 1;
    if (!(times >= 1)) throw new RangeError('Fault.times must be at least 1 (or Infinity)');
    if (fault.delayMs !== undefined && !(fault.delayMs >= 0)) {
      throw new RangeError('Fault.delayMs must be a non-negative number');
    }
    this.#active.push({ fault, remaining: times });
  }

  /** Removes every queued fault. */
  clear(): void {
    this.#active = [];
  }

  /** Faults that still have uses left, in matching order (to assert that a fault was consumed). */
  pending(): Fault[] {
    return this.#active.map((a) => a.fault);
  }

  /** Number of faults that still have uses left. */
  get size(): number {
    return this.#active.length;
  }

  /** Consumes one use of the first fault matching a request, if any. */
  take(method: string, pathname: string): Fault | undefined {
    const index = this.#active.findIndex(
      (a) => methodMatches(a.fault.method, method) && pathMatches(a.fault.path, pathname),
    );
    const active = this.#active[index];
    if (!active) return undefined;
    active.remaining -= 1;
    if (active.remaining <= 0) this.#active.splice(index, 1);
    return active.fault;
  }
}
