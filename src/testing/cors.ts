/**
 * CORS for browser tests: a page served from another loopback origin must be able to call the
 * mock with the SDK's headers and read Retry-After on a 429 and the request id of any answer.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'Authorization, X-API-Key, Content-Type, Idempotency-Key',
  // PUT and DELETE are used by the control surface (`/_mock/`) only.
  'access-control-allow-methods': 'GET, POST, PUT, DELETE, OPTIONS',
  // A page reads the request id to report which request failed.
  'access-control-expose-headers': 'Retry-After, X-Request-Id',
};

/** The answer to a preflight: no auth, no body. */
export function preflightResponse(): Response {
  return new Response(null, { status: 204, headers: { ...CORS_HEADERS, 'access-control-max-age': '600' } });
}

/** Copies a response with the CORS headers added (handler responses may have immutable headers). */
export function withCors(response: Response): Response {
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(CORS_HEADERS)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
