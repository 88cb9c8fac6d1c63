/**
 * Whether a request carries the API key in either documented header. Either header may be
 * used; a wrong value in one does not hide a right value in the other.
 */
export function isAuthorized(headers: Headers, apiKey: string): boolean {
  const authorization = headers.get('authorization');
  const bearer = authorization ? /^Bearer\s+(.+)$/i.exec(authorization.trim())?.[1] : undefined;
  return bearer === apiKey || headers.get('x-api-key') === apiKey;
}
