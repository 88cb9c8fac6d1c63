import { methodMatches, pathMatches } from './matching.js';

/** One `/api/` request as the mock received it, before auth, faults or validation. */
export interface RecordedRequest {
  /** HTTP method as received, e.g. `GET`. */
  method: string;
  /** Raw (still percent-encoded) pathname, e.g. `/api/transactions/a%2Fb/`. */
  path: string;
  /** Full request URL. */
  url: string;
  /** Query parameters, decoded; the last value wins when a name repeats. */
  query: Record<string, string>;
  /** Headers with lowercased names. */
  headers: Record<string, string>;
  /** The body parsed as JSON; undefined when there is none or it is not JSON. */
  body: unknown;
  /** The body as received (empty string when none), for bodies that are not JSON. */
  rawBody: string;
  /**
   * The `x-request-id` the mock answered with (`req_` and 24 hex digits, or a fault's fixed
   * one), also set when no answer was sent (a reset), so a client's error can be traced here.
   */
  requestId: string;
}

/** Selects recorded requests by method and/or path (string prefix or RegExp), or by predicate. */
export type RequestFilter =
  | {
      /** HTTP method to match, case-insensitively; any method when omitted. */
      method?: string | undefined;
      /** Prefix of {@link RecordedRequest.path}, or a RegExp tested against it; any path when omitted. */
      path?: string | RegExp | undefined;
    }
  | ((request: RecordedRequest) => boolean);

function matches(filter: RequestFilter | undefined, request: RecordedRequest): boolean {
  if (filter === undefined) return true;
  if (typeof filter === 'function') return filter(request);
  return methodMatches(filter.method, request.method) && pathMatches(filter.path, request.path);
}

/**
 * Log of every `/api/` request, so tests can prove what the SDK sent: that nothing was sent,
 * that a retry reused its event_key, which auth header was used.
 */
export class RecordedRequests {
  #log: RecordedRequest[] = [];

  /** Appends a request (called by the mock for each `/api/` request). */
  push(request: RecordedRequest): void {
    this.#log.push(request);
  }

  /** Recorded requests in arrival order, optionally filtered. */
  all(filter?: RequestFilter): RecordedRequest[] {
    return this.#log.filter((r) => matches(filter, r));
  }

  /** The most recent request (matching the filter), if any. */
  last(filter?: RequestFilter): RecordedRequest | undefined {
    return this.all(filter).at(-1);
  }

  /** How many requests (matching the filter) were received. */
  count(filter?: RequestFilter): number {
    return this.all(filter).length;
  }

  /** Forgets every recorded request. */
  clear(): void {
    this.#log = [];
  }
}

/** Builds the record of a request without consuming the body the handler will read. */
export async function recordRequest(request: Request, requestId: string): Promise<RecordedRequest> {
  const url = new URL(request.url);
  const rawBody = request.body === null ? '' : await request.clone().text();
  let body: unknown;
  if (rawBody !== '') {
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
  }
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  return {
    method: request.method,
    path: url.pathname,
    url: request.url,
    query: Object.fromEntries(url.searchParams),
    headers,
    body,
    rawBody,
    requestId,
  };
}
