import { KeyClaim } from './idempotency.js';
import { keptHeaders } from './replay.js';
import { type GateRoute, succeeded, type WaitUntil } from './route.js';
import type { GateAllowed } from './types.js';

/**
 * Runs an allowed request's handler, then the route's work after the answer (its hold, its usage):
 * the Fetch-shaped adapters (`protect`, `hono`) share it. A throw of the handler releases the hold
 * and goes on. A 2xx answer with a body comes back with its body wrapped (see {@link delivered}):
 * the request finishes when the client has read it to its end.
 */
export async function after<Req>(
  route: GateRoute<Req>,
  request: Req,
  decision: GateAllowed,
  waitUntil: WaitUntil | undefined,
  run: () => Response | Promise<Response>,
): Promise<Response> {
  let response: Response;
  try {
    response = await run();
  } catch (error) {
    const done = route.finish(request, decision, undefined, waitUntil);
    if (!waitUntil) await done;
    throw error;
  }
  return delivered(route, request, decision, waitUntil, response);
}

/**
 * The route's work once `response` was delivered. Without a body to deliver (none, an answer other
 * than 2xx, a HEAD request, a body already locked), at once: handed to `waitUntil`, or awaited before the answer (a
 * serverless platform may freeze the process as soon as it is sent). Else the body is wrapped: its
 * last read (the client had every byte) settles what the handler used and tracks the usage; a stream
 * that errors or a client that cancels releases the hold and tracks nothing. With `waitUntil`, the
 * platform is handed that work when the answer leaves; without, the body's end waits for it.
 * On a gate with `idempotency.replay`, a request with a key has its answer below 500 kept as it is
 * read (a 4xx's body wrapped for that too) and handed to the key's claim at the body's end.
 */
export async function delivered<Req>(
  route: GateRoute<Req>,
  request: Req,
  decision: GateAllowed,
  waitUntil: WaitUntil | undefined,
  response: Response,
): Promise<Response> {
  const { status, body } = response;
  const claim = decision.idempotency instanceof KeyClaim ? decision.idempotency : undefined;
  // A gate that replays keeps the answer of a request with a key (a 5xx frees the key: never kept).
  const kept = claim && status < 500 ? claim.answerBody() : undefined;
  const answered = () => {
    if (kept)
      claim?.answered(
        status,
        keptHeaders((name) => response.headers.get(name) ?? undefined),
        kept,
      );
  };
  if (
    body === null ||
    !(succeeded(status) || kept) ||
    body.locked ||
    (request as { method?: string }).method === 'HEAD'
  ) {
    if (body === null) answered();
    // Nothing the gate could follow (a body already locked is the handler's own affair): finished now.
    const done = route.finish(request, decision, status, waitUntil);
    if (!waitUntil) await done;
    return response;
  }
  let handOver: (done: Promise<void>) => void = () => {};
  const whole = new Promise<void>((resolve) => {
    handOver = resolve;
  });
  let done: Promise<void> | undefined;
  /** The route's work, once: after the body's end with the status, else with none. */
  const end = (ended: number | undefined): Promise<void> => {
    if (!done) {
      done = route.finish(request, decision, ended, waitUntil);
      handOver(done);
    }
    return done;
  };
  if (waitUntil) {
    try {
      waitUntil(whole);
    } catch {
      // The platform refused it now: `finish` hands its work again when the body ends, and reports a refusal then.
    }
  }
  // A 2xx not delivered whole is not served (its hold released, its key free for the retry); any
  // other answer, wrapped only to be kept, uses its key whatever the client read, as unwrapped.
  const lost = succeeded(status) ? undefined : status;
  const reader = body.getReader();
  const wrapped = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          void end(lost);
          controller.error(error);
          return;
        }
        if (!chunk.done) {
          kept?.add(chunk.value);
          controller.enqueue(chunk.value);
          return;
        }
        answered();
        const finishing = end(status);
        if (!waitUntil) await finishing;
        controller.close();
      },
      cancel(reason) {
        void end(lost);
        return reader.cancel(reason);
      },
    },
    // Nothing is read ahead: a pull is a read of the client's, so the last one means it had it all.
    { highWaterMark: 0 },
  );
  return new Response(wrapped, { status, statusText: response.statusText, headers: response.headers });
}

/** What Node's response (Express, Fastify's `reply.raw`) tells of its end. */
export interface NodeEnd {
  once(event: 'finish' | 'close', listener: () => void): unknown;
  /** Node's `ServerResponse` is destroyed once its connection closed (absent in a stand-in). */
  readonly destroyed?: boolean | undefined;
}

/** The connection of one request, watched from before the decision (see {@link watchNode}). */
export interface NodeWatch {
  /**
   * The decision allowed the request: the route's work follows the response's end. `false` when the
   * client is already gone: the route finished at once (the hold released) and the handler must not run.
   */
  allowed(decision: GateAllowed): boolean;
}

/**
 * Watches a Node response (Express, Connect, node:http, Fastify) from before the decision: the
 * route's work follows with the status once it was sent (`finish`), with none when the connection
 * closed first (the client went away: the hold is released), even while the gate was deciding.
 */
export function watchNode<Req>(
  route: GateRoute<Req>,
  request: Req,
  res: NodeEnd,
  status: () => number,
): NodeWatch {
  let decision: GateAllowed | undefined;
  let over = res.destroyed === true;
  let ended: number | undefined;
  const end = (with_: number | undefined) => {
    if (over) return;
    over = true;
    ended = with_;
    if (decision) void route.finish(request, decision, with_);
  };
  res.once('finish', () => end(status()));
  res.once('close', () => end(undefined));
  return {
    allowed(allowed) {
      decision = allowed;
      if (!over) return true;
      void route.finish(request, allowed, ended);
      return false;
    },
  };
}

/** What the gate wraps of a Node response (Node's `ServerResponse`) to keep its answer. */
interface NodeWrites {
  statusCode: number;
  writeHead: (...args: unknown[]) => unknown;
  write?: ((...args: unknown[]) => unknown) | undefined;
  end: (...args: unknown[]) => unknown;
  getHeader?: ((name: string) => unknown) | undefined;
}

/** A header's value as Node holds it (a string, a number, a list), as one string. */
const headerText = (value: unknown): string | undefined =>
  value === undefined || value === null ? undefined : Array.isArray(value) ? value.join(', ') : String(value);

/**
 * On a gate that replays, for an allowed request with a key: keeps what the handler sends through
 * Node's `res` (Express, Fastify's `reply.raw`) by wrapping this one response's `writeHead`, `write`
 * and `end`; the answer is handed to the key's claim when `end` is called, before Node's `finish`
 * closes the claim. Any other request's response is left as it is: no work without a key.
 */
export function keepNodeAnswer(res: object, decision: GateAllowed): void {
  if (decision.idempotency instanceof KeyClaim) keepWrites(res as NodeWrites, decision.idempotency);
}

/**
 * The wrapping itself, apart: its closures' variables are allocated when a function starts, and
 * every allowed request passes through {@link keepNodeAnswer}.
 */
function keepWrites(r: NodeWrites, claim: KeyClaim): void {
  const kept = claim.answerBody();
  if (!kept || typeof r.end !== 'function' || typeof r.writeHead !== 'function') return;
  const { writeHead, write, end } = r;
  // Fastify hands its headers to writeHead, where getHeader never sees them.
  const given = new Map<string, string>();
  r.writeHead = function (this: unknown, ...args: unknown[]) {
    const headers = args.find((arg) => typeof arg === 'object' && arg !== null);
    const pairs: [unknown, unknown][] = Array.isArray(headers)
      ? headers.flatMap((_, i) => (i % 2 === 0 ? [[headers[i], headers[i + 1]] as [unknown, unknown]] : []))
      : Object.entries(headers ?? {});
    for (const [name, value] of pairs) {
      const text = headerText(value);
      if (text !== undefined) given.set(String(name).toLowerCase(), text);
    }
    return writeHead.apply(this, args);
  };
  if (typeof write === 'function') {
    r.write = function (this: unknown, ...args: unknown[]) {
      kept.add(args[0], typeof args[1] === 'string' ? args[1] : undefined);
      return write.apply(this, args);
    };
  }
  r.end = function (this: unknown, ...args: unknown[]) {
    if (typeof args[0] !== 'function') kept.add(args[0], typeof args[1] === 'string' ? args[1] : undefined);
    const headers = keptHeaders((name) => given.get(name) ?? headerText(r.getHeader?.(name)));
    claim.answered(r.statusCode, headers, kept);
    return end.apply(this, args);
  };
}
