/** Response header naming the request, so a client's error can be matched to the mock's record. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A fresh id, `req_` and 24 hex digits. Random rather than a counter so ids stay unique across
 * `reset()` and across mock instances in one test run (a client may talk to several).
 */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return `req_${hex}`;
}
