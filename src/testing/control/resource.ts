import type { Hono } from 'hono';
import { methodNotAllowed } from '../errors.js';
import type { Handler } from '../routes/context.js';

/**
 * Prefix of the control surface: outside `/api/`, so its requests are neither recorded in the
 * request log nor subject to faults.
 */
export const CONTROL_PREFIX = '/_mock';

/** Methods the control routes use. */
export type ControlMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Registers the handlers of one control path (relative to {@link CONTROL_PREFIX}), with and without
 * a trailing slash, and a 405 for every other method on it.
 */
export function resource(app: Hono, path: string, handlers: Partial<Record<ControlMethod, Handler>>): void {
  const full = `${CONTROL_PREFIX}${path}`;
  for (const variant of [full, `${full}/`]) {
    for (const [method, handler] of Object.entries(handlers)) app.on(method, variant, handler);
    // Hono serves HEAD through the GET route, so anything reaching this used another verb.
    app.all(variant, (c) => methodNotAllowed(c.req.method));
  }
}

/** The answer of a control action that has nothing to return (clear, unregister, reset). */
export function noContent(): Response {
  return new Response(null, { status: 204 });
}
