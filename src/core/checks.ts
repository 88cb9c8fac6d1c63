import { InvalidRequestError, type InvalidRequestIssue } from './errors.js';

/** A check of one parameter: the problem, phrased to follow the field name, or `undefined`. */
export type Rule = (value: unknown) => string | undefined;

/** Rules per parameter. Every rule but `required` passes an absent value. */
export type Rules = Record<string, readonly Rule[]>;

const absent = (v: unknown) => v === undefined || v === null;

/** The parameter must be given (and not be an empty string). */
export const required: Rule = (v) => (absent(v) || v === '' ? 'is required' : undefined);

/** A non-empty string. */
export const text: Rule = (v) =>
  absent(v) || (typeof v === 'string' && v !== '') ? undefined : 'must be a non-empty string';

/**
 * A value that becomes one URL path segment. `.` and `..` are refused: the URL parser would treat
 * them (even percent-encoded) as a move up the path and call another endpoint.
 */
export const segment: Rule = (v) =>
  text(v) ?? (v === '.' || v === '..' ? 'must not be "." or ".."' : undefined);

/** One of the listed values. */
export const oneOf =
  (values: readonly string[]): Rule =>
  (v) =>
    absent(v) || values.includes(v as string) ? undefined : `must be one of ${values.join(', ')}`;

/** An integer within [min, max]. */
export const integer =
  (min: number, max: number = Number.MAX_SAFE_INTEGER): Rule =>
  (v) => {
    if (absent(v)) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) return 'must be an integer';
    if (v < min) return `must be >= ${min}`;
    return v > max ? `must be <= ${max}` : undefined;
  };

/** A finite number greater than zero. */
export const positiveNumber: Rule = (v) =>
  absent(v) || (typeof v === 'number' && Number.isFinite(v) && v > 0) ? undefined : 'must be a number > 0';

/** A boolean. */
export const boolean: Rule = (v) => (absent(v) || typeof v === 'boolean' ? undefined : 'must be a boolean');

/** A plain JSON object (not an array). */
export const plainObject: Rule = (v) =>
  absent(v) || (typeof v === 'object' && !Array.isArray(v)) ? undefined : 'must be a plain object';

/** A valid `Date` or a string `Date.parse` understands. */
export const dateLike: Rule = (v) => {
  if (absent(v)) return undefined;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'must be a valid date' : undefined;
  return typeof v === 'string' && !Number.isNaN(Date.parse(v))
    ? undefined
    : 'must be a Date or an ISO 8601 string';
};

/** `page` and `page_size` as the reference limits them. */
export const pageRules: Rules = { page: [integer(1)], page_size: [integer(1, 100)] };

/**
 * Checks `params` against `rules` and cross-field `extra` checks, and throws one
 * {@link InvalidRequestError} listing every problem, before anything is sent.
 */
export function check<P extends object>(
  operation: string,
  params: P | undefined,
  rules: Rules,
  extra?: (params: Record<string, unknown>) => InvalidRequestIssue[],
): P {
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    throw new InvalidRequestError(operation, [{ field: 'params', message: 'must be an object' }]);
  }
  const record = (params ?? {}) as Record<string, unknown>;
  const issues: InvalidRequestIssue[] = [];
  for (const [field, fieldRules] of Object.entries(rules)) {
    for (const rule of fieldRules) {
      const message = rule(record[field]);
      if (message) {
        issues.push({ field, message });
        break;
      }
    }
  }
  if (extra) issues.push(...extra(record));
  if (issues.length) throw new InvalidRequestError(operation, issues);
  return record as P;
}
