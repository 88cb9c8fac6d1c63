import type { Context, Hono } from 'hono';
import type { MockConfig } from '../config.js';
import { methodNotAllowed } from '../errors.js';
import type { MockStore } from '../store.js';

/** What every route module needs: the state and the resolved options. */
export interface RouteContext {
  store: MockStore;
  config: MockConfig;
}

/** A route handler; routes build their responses with the helpers of `errors.ts`. */
export type Handler = (c: Context) => Response | Promise<Response>;

/**
 * Registers a route and answers 405 for the other methods on the same path, so a client using
 * the wrong verb gets a clear error instead of a misleading 404.
 */
export function route(app: Hono, method: 'GET' | 'POST', path: string, handler: Handler): void {
  app.on(method, path, handler);
  // Hono serves HEAD through the GET route, so anything reaching this used another verb.
  app.all(path, (c) => methodNotAllowed(c.req.method));
}

/**
 * A decoded path segment by index (`/api/transactions/<3>/`). Read from the raw URL and decoded
 * once with decodeURIComponent, so ids with spaces, `%2F`, `%25` or unicode come out exact.
 */
export function pathSegment(requestUrl: string, index: number): string {
  const raw = new URL(requestUrl).pathname.split('/')[index] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The query of a request, decoded. */
export function queryOf(requestUrl: string): URLSearchParams {
  return new URL(requestUrl).searchParams;
}
