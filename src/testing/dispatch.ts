import type { Hono } from 'hono';
import type { MockConfig } from './config.js';
import { preflightResponse, withCors } from './cors.js';
import { defaultFaultBody } from './errors.js';
import type { Fault, MockFaults } from './faults.js';
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

/** Handles one request end to end: CORS, recording, faults, then the router. */
export type Dispatch = (request: Request, connection: Connection) => Promise<Response>;

function faultResponse(fault: Fault, status: number): Response {
  const headers = new Headers(fault.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return new Response(fault.body ?? defaultFaultBody(status), { status, headers });
}

/** Builds the request pipeline around a router. */
export function createDispatch(deps: {
  router: Hono;
  faults: MockFaults;
  requests: RecordedRequests;
  config: MockConfig;
}): Dispatch {
  const { router, faults, requests, config } = deps;
  const finish = (response: Response): Response => (config.cors ? withCors(response) : response);
  return async (request, connection) => {
    const signal = request.signal;
    if (config.cors && request.method === 'OPTIONS') return preflightResponse();
    const { pathname } = new URL(request.url);
    if (!pathname.startsWith('/api/')) return finish(await router.fetch(request));

    requests.push(await recordRequest(request));
    const fault = faults.take(request.method, pathname);
    if (fault?.delayMs !== undefined && fault.delayMs > 0) {
      if (!(await sleep(fault.delayMs, signal))) return connection.aborted(signal);
    }
    if (fault?.reset === 'before') return connection.reset();
    if (fault?.reset === undefined && fault?.status !== undefined)
      return finish(faultResponse(fault, fault.status));
    const response = await router.fetch(request);
    if (fault?.reset === 'after') {
      // The handler has committed its change; the client never learns the outcome.
      await response.body?.cancel();
      return connection.reset();
    }
    return finish(response);
  };
}
