import type { GateRequest } from './types.js';

/** A header of a Fetch `Request` or of Node's header object, `undefined` when absent. */
export function headerOf(request: GateRequest, name: string): string | undefined {
  const headers = request.headers as { get?: unknown } & Record<string, unknown>;
  if (typeof headers.get === 'function')
    return (headers.get as (n: string) => string | null)(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : typeof value === 'string' ? value : undefined;
}

/**
 * Whether a person's browser is navigating (GET or HEAD asking for HTML): such a "no" is a redirect
 * to the paywall, anything else a machine-readable answer.
 */
export function isNavigation(request: GateRequest): boolean {
  const method = (request.method ?? 'GET').toUpperCase();
  return (method === 'GET' || method === 'HEAD') && (headerOf(request, 'accept') ?? '').includes('text/html');
}
