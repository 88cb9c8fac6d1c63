/**
 * Path matching shared by faults and the request log: a string is a prefix of the pathname
 * (`'/api/invoices/'` covers every invoice route), a RegExp is tested against it.
 */
export function pathMatches(pattern: string | RegExp | undefined, pathname: string): boolean {
  if (pattern === undefined) return true;
  if (typeof pattern === 'string') return pathname.startsWith(pattern);
  // A global or sticky RegExp keeps state between tests; start from the beginning every time.
  pattern.lastIndex = 0;
  return pattern.test(pathname);
}

/** Method matching, case-insensitive; an absent method matches every method. */
export function methodMatches(expected: string | undefined, method: string): boolean {
  return expected === undefined || expected.toUpperCase() === method.toUpperCase();
}
