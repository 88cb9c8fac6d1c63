import { methodMatches, pathMatches } from './matching.js';

/**
 * A failure to inject into matching `/api/` requests. Combine fields: `delayMs` runs first; then
 * `reset` wins over everything else; then `status` replaces the handler (or, with neither, the real
 * handler answers); `headers`, `encoding` and `stall` then shape whichever answer is sent.
 *
 * A request consumes at most one fault: the first added that matches, still has uses left and
 * fires (see `probability`).
 */
export interface Fault {
  /** HTTP method to match (case-insensitive); all methods when omitted. */
  method?: string | undefined;
  /** Pathname to match: a string is a prefix (e.g. `'/api/invoices/'`), a RegExp is tested. */
  path?: string | RegExp | undefined;
  /** How many requests this fault fires on; default 1, `Infinity` allowed. */
  times?: number | undefined;
  /**
   * Chance, from 0 to 1, that the fault fires on a matching request; default 1 (always). When it
   * does not fire, the request goes on to the next matching fault, or to the real handler, and
   * the fault keeps its use (`times` counts only requests it fired on). The draw comes from the
   * mock's `random` option, so a soak is reproducible with `random: seededRandom(seed)`.
   */
  probability?: number | undefined;
  /** Answer this status instead of running the handler (nothing changes in the store). */
  status?: number | undefined;
  /**
   * Response headers set on the answer given under this fault (a status fault's, or the
   * handler's when only `delayMs`, `encoding` or `stall` apply), replacing any of the same name,
   * e.g. `{ 'retry-after': '1' }` or a fixed `{ 'x-request-id': 'req_test' }` (which is then also
   * the recorded `requestId`).
   */
  headers?: Record<string, string> | undefined;
  /**
   * Raw body of a status fault (needs `status`); default a JSON body of the service's shape for
   * that status. Encoded once per fault, so a 50 MB string costs nothing per request.
   */
  body?: string | undefined;
  /**
   * Raw body of a status fault as bytes (needs `status`; exclusive with `body`), sent byte for
   * byte, e.g. an already gzipped body with `headers: { 'content-encoding': 'gzip' }`. Copied when
   * first sent: later changes to the array do not show.
   */
  bodyBytes?: Uint8Array | undefined;
  /**
   * Compress the answer's body (the fault's `body`/`bodyBytes`, or the handler's JSON) and send
   * `content-encoding: gzip` with the compressed length. A status fault's body is compressed once
   * per fault, so `encoding: 'gzip'` with a 64 MB `body` and `times: Infinity` stays fast. In
   * process, `createMockApp().fetch` decodes it as the platform fetch does.
   */
  encoding?: 'gzip' | undefined;
  /**
   * `'body'`: send the status line, the headers (without `content-length`, so chunked) and the
   * first half of the body (rounded down; of the compressed bytes with `encoding`), then stop
   * writing and never end the answer, until the client goes away or the server closes. The real
   * handler has already run, so a stalled write has been applied (as with `reset: 'after'`); with
   * `status`, the status fault's body stalls instead. In process, the body is a stream that never
   * closes, and errors when the request's signal aborts. Exclusive with `reset`.
   */
  stall?: 'body' | undefined;
  /** Wait this long before handling; if the client goes away meanwhile, nothing is handled. */
  delayMs?: number | undefined;
  /**
   * Drop the connection without answering. `'before'`: the handler never runs (no state change).
   * `'after'`: the handler runs and commits its change, then the answer is lost.
   */
  reset?: 'before' | 'after' | undefined;
}

/** Options of {@link MockFaults}. */
export interface MockFaultsOptions {
  /** Numbers in [0, 1) deciding whether a fault with `probability` < 1 fires; default `Math.random`. */
  random?: (() => number) | undefined;
}

interface ActiveFault {
  fault: Fault;
  remaining: number;
}

/** Refuses a fault that could never apply as written, so a typo fails the test that made it. */
function validate(fault: Fault): void {
  const times = fault.times ?? 1;
  if (!(times >= 1)) throw new RangeError('Fault.times must be at least 1 (or Infinity)');
  if (fault.delayMs !== undefined && !(fault.delayMs >= 0)) {
    throw new RangeError('Fault.delayMs must be a non-negative number');
  }
  const p = fault.probability;
  if (p !== undefined && !(p >= 0 && p <= 1)) throw new RangeError('Fault.probability must be from 0 to 1');
  if (fault.reset !== undefined && fault.reset !== 'before' && fault.reset !== 'after') {
    throw new RangeError("Fault.reset must be 'before' or 'after'");
  }
  if (fault.stall !== undefined && fault.stall !== 'body') throw new RangeError("Fault.stall must be 'body'");
  if (fault.stall !== undefined && fault.reset !== undefined) {
    throw new RangeError('Fault.stall and Fault.reset exclude each other: a reset sends nothing');
  }
  if (fault.encoding !== undefined && fault.encoding !== 'gzip') {
    throw new RangeError("Fault.encoding must be 'gzip'");
  }
  if (fault.body !== undefined && fault.bodyBytes !== undefined) {
    throw new RangeError('Fault.body and Fault.bodyBytes exclude each other');
  }
  if ((fault.body !== undefined || fault.bodyBytes !== undefined) && fault.status === undefined) {
    throw new RangeError('Fault.body and Fault.bodyBytes need Fault.status (the handler answers otherwise)');
  }
}

/**
 * The queue of injected faults. Each request consumes at most one fault: the first added that
 * matches, still has uses left and fires (see {@link Fault.probability}).
 */
export class MockFaults {
  #active: ActiveFault[] = [];
  readonly #random: () => number;

  /** No fault active; `options.random` decides probabilistic faults (default `Math.random`). */
  constructor(options: MockFaultsOptions = {}) {
    this.#random = options.random ?? Math.random;
  }

  /** Queues a fault; throws a RangeError on fields that could never apply as written. */
  add(fault: Fault): void {
    validate(fault);
    this.#active.push({ fault, remaining: fault.times ?? 1 });
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

  /** Consumes one use of the first fault that matches a request and fires, if any. */
  take(method: string, pathname: string): Fault | undefined {
    const index = this.#active.findIndex(
      (a) =>
        methodMatches(a.fault.method, method) && pathMatches(a.fault.path, pathname) && this.#fires(a.fault),
    );
    const active = this.#active[index];
    if (!active) return undefined;
    active.remaining -= 1;
    if (active.remaining <= 0) this.#active.splice(index, 1);
    return active.fault;
  }

  /** Draws only for a real chance, so faults that always (or never) fire leave the sequence alone. */
  #fires(fault: Fault): boolean {
    const p = fault.probability ?? 1;
    if (p >= 1) return true;
    if (p <= 0) return false;
    return this.#random() < p;
  }
}
