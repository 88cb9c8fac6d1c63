import type { InvalidRequestIssue } from '../core/errors/index.js';
import { isPlainObject } from './checks.js';

/** RFC 9110 token: what a header name may be made of. */
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value fetch accepts: bytes 0x09, 0x20–0x7E and 0x80–0xFF; never NUL, CR or LF. */
const fieldValue = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Problems with a headers object (client `headers` or per-call `options.headers`), found before a
 * request is built: fetch would throw a bare TypeError at send time, which the retry loop would
 * mistake for a connection failure. Values are never quoted in the messages: a header may hold a
 * credential.
 */
export function headerIssues(field: string, headers: unknown): InvalidRequestIssue[] {
  if (!isPlainObject(headers))
    return [{ field, message: 'must be a plain object of header names to strings' }];
  const issues: InvalidRequestIssue[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!token.test(name))
      issues.push({ field: `${field}[${JSON.stringify(name)}]`, message: 'is not a valid header name' });
    else if (typeof value !== 'string')
      issues.push({ field: `${field}.${name}`, message: 'must be a string' });
    else if (!fieldValue.test(value)) {
      issues.push({
        field: `${field}.${name}`,
        message: 'must not contain control characters such as CR, LF or NUL, or characters above U+00FF',
      });
    }
  }
  return issues;
}

/** Header names lower-cased, so defaults, per-call headers and credentials override each other predictably. */
export function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers) for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}

/**
 * Whether an API key can travel in a header as it is: printable ASCII without spaces. Anything else
 * (CR, LF, NUL, a pasted newline) makes fetch throw an error that quotes the whole header, key
 * included, so it is refused when the client is built.
 */
export function isValidApiKey(key: string): boolean {
  return /^[\x21-\x7e]+$/.test(key);
}
