import type { InvalidRequestIssue } from '../core/errors/index.js';
import { isWellFormed } from '../util/well-formed.js';

/**
 * Query parameters: strings, numbers, booleans and Dates; `undefined` and `null` are left out of
 * the URL.
 */
export type QueryParams = object;

/**
 * A value that cannot go into a URL as given. Thrown by {@link path} and {@link queryString} while a
 * request is built; the request path turns it into an `InvalidRequestError` naming the operation.
 * The parameter checks refuse such values first, with their field names; this is the backstop
 * that no resource can forget.
 */
export class UnsafeUrlValue extends Error {
  readonly issue: InvalidRequestIssue;

  constructor(issue: InvalidRequestIssue) {
    super(`${issue.field} ${issue.message}`);
    this.issue = issue;
  }
}

/**
 * A path built by the {@link path} tag: the path itself, and its template with each value replaced
 * by its name (`account/{account_ref_id}/status/`), which tracing publishes as the route: never
 * an id.
 */
export interface RoutedPath {
  readonly path: string;
  readonly route: string;
}

/**
 * Builds a path from a template, percent-encoding every interpolated value as one segment, so an
 * id such as `a/b?c` can never change which endpoint is called. Each value is given by name, as a
 * one-key object, so the route (the template) is known too. Refuses `.` and `..` (the URL parser
 * would move up the path even when they are percent-encoded), empty segments and strings with a
 * lone surrogate (which `encodeURIComponent` cannot encode).
 *
 * @example path`transactions/${{ account_ref_id }}/`
 */
export function path(
  strings: TemplateStringsArray,
  ...values: Readonly<Record<string, unknown>>[]
): RoutedPath {
  let out = strings[0] ?? '';
  let route = out;
  for (let i = 0; i < values.length; i++) {
    const [name, value] = Object.entries(values[i] ?? {})[0] ?? ['', undefined];
    if (
      typeof value !== 'string' ||
      value === '' ||
      value === '.' ||
      value === '..' ||
      !isWellFormed(value)
    ) {
      throw new UnsafeUrlValue({
        field: name || 'path',
        message: `(path segment ${i + 1}) must be a non-empty, well-formed string other than "." and ".."`,
      });
    }
    const rest = strings[i + 1] ?? '';
    out += encodeURIComponent(value) + rest;
    route += `{${name}}${rest}`;
  }
  return { path: out, route };
}

/** `?a=1&b=x` from the present values, or `''` when there are none. */
export function queryString(query: QueryParams | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.append(key, queryValue(key, value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function queryValue(key: string, value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // URLSearchParams would send U+FFFD for a lone surrogate: the server would see another value.
  if (typeof value === 'string' && isWellFormed(value)) return value;
  throw new UnsafeUrlValue({
    field: key,
    message: 'must be a well-formed string, a number, a boolean or a Date',
  });
}
