import type { Hono } from 'hono';
import { type AnswerContext, handlerAnswer, statusFaultAnswer } from './answer.js';
import type { MockConfig } from './config.js';
import { preflightResponse, withCors } from './cors.js';
import type { Fault, MockFaults } from './faults.js';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.js';
import { type RecordedRequests, recordRequest } from './requests.js';
import { sleep } from './sleep.js';

/**
 * How a transport drops a connection. Over TCP the socket is destroyed; in process there is no
 * socket, so the fetch call rejects the way a real fetch does.
 */
export interface Connection {
  /** Drops the connection without an answer; returns a placeholder response or throws. */
  reset(): Response;
  /** The client went away while a delay was pending; returns a placeholder response or throws. */
  aborted(signal: AbortSignal): Response;
}

/**
 * Handles one request end to end: CORS, recording, faults, then the router. `signal` aborts when
 * the client goes away. It is passed beside the request, not read from `request.signal`: a
 * `Request` built with a signal follows it through a link undici holds weakly, and under GC
 * pressure that link can be collected, so an abort would never reach a delay or a stalled body.
 */
export type Dispatch = (request: Request, connection: Connection, signal: AbortSignal) => Promise<Response>;

/** A fault may fix the id (e.g. to assert on it in a log line); it is then recorded too. */
function requestIdFor(fault: Fault | undefined): string {
  const fixed = fault?.headers && new Headers(fault.headers).get(REQUEST_ID_HEADER);
  return fixed || newRequestId();
}

/** Builds the request pipeline around a router. */
export function createDispatch(deps: {
  router: Hono;
  faults: MockFaults;
  requests: RecordedRequests;
  config: MockConfig;
}): Dispatch {
  const { router, faults, requests, config } = deps;
  return async (request, connection, signal) => {
    if (config.cors && request.method === 'OPTIONS') return preflightResponse();
    const { pathname } = new URL(request.url);
    if (!pathname.startsWith('/api/')) {
      const response = await router.fetch(request);
      return config.cors ? withCors(response) : response;
    }

    // Taken before the body is read so that faults go to requests in the order they arrived.
    const fault = faults.take(request.method, pathname);
    const context: AnswerContext = { requestId: requestIdFor(fault), cors: config.cors, signal };
    requests.push(await recordRequest(request, context.requestId));
    if (fault?.delayMs !== undefined && fault.delayMs > 0) {
      if (!(await sleep(fault.delayMs, signal))) return connection.aborted(signal);
    }
    if (fault?.reset === 'before') return connection.reset();
    if (fault?.reset === undefined && fault?.status !== undefined) {
      return statusFaultAnswer(fault, fault.status, context);
    }
    const response = await router.fetch(request);
    if (fault?.reset === 'after') {
      // The handler has committed its change; the client never learns the outcome.
      await response.body?.cancel();
      return connection.reset();
    }
    return handlerAnswer(response, fault, context);
  };
}
