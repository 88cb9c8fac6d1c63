import { InvalidRequestError, type InvalidRequestIssue } from '../core/errors/index.js';
import { isWellFormed } from '../util/well-formed.js';

/**
 * A check of one present parameter: the problem, phrased to follow the field name, or `undefined`.
 * A rule over an object of values (headers) may return its issues with their own field names.
 */
export type Rule = (value: unknown, field?: string) => string | InvalidRequestIssue[] | undefined;

/**
 * Rules per parameter: the keys are every parameter the method knows. `required` marks the ones
 * that must be present; the other rules see only present values.
 */
export type Rules = Record<string, readonly Rule[]>;

/**
 * A rule list for every parameter of `P`, optional ones included, and for nothing else: a field
 * added to a params type without its rule (or a rule for a field the type lacks) does not compile.
 */
export type ParamRules<P> = { readonly [K in keyof P]-?: readonly Rule[] };

/** Cross-field rules; they see the parameters after `null` and `undefined` were removed. */
export type CrossRule = (params: Record<string, unknown>) => InvalidRequestIssue[];

/** The parameter must be given (`null`, `undefined` and `''` are not given). */
export const required: Rule = () => undefined;

/** A non-empty, well-formed string. */
export const text: Rule = (v) => {
  if (typeof v !== 'string' || v === '') return 'must be a non-empty string';
  return isWellFormed(v) ? undefined : 'must not contain a lone UTF-16 surrogate';
};

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
    values.includes(v as string) ? undefined : `must be one of ${values.join(', ')}`;

/** An integer within [min, max]. */
export const integer =
  (min: number, max: number = Number.MAX_SAFE_INTEGER): Rule =>
  (v) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) return 'must be an integer';
    if (v < min) return `must be >= ${min}`;
    return v > max ? `must be <= ${max}` : undefined;
  };

/** A number greater than zero; `Infinity` allowed (a limit that is no limit). */
export const positive: Rule = (v) => (typeof v === 'number' && v > 0 ? undefined : 'must be a number > 0');

/** A number >= 0; `Infinity` allowed. */
export const nonNegative: Rule = (v) =>
  typeof v === 'number' && v >= 0 ? undefined : 'must be a number >= 0';

/** A function. */
export const func: Rule = (v) => (typeof v === 'function' ? undefined : 'must be a function');

/** Duck-typed rather than `instanceof`: signals from another realm or a polyfill are fine too. */
export const abortSignal: Rule = (v) => {
  const s = v as {
    aborted?: unknown;
    addEventListener?: unknown;
    removeEventListener?: unknown;
  };
  return typeof s.aborted === 'boolean' &&
    typeof s.addEventListener === 'function' &&
    typeof s.removeEventListener === 'function'
    ? undefined
    : 'must be an AbortSignal';
};

/** A finite number greater than zero. */
export const positiveNumber: Rule = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? undefined : 'must be a number > 0';

/** A boolean. */
export const boolean: Rule = (v) => (typeof v === 'boolean' ? undefined : 'must be a boolean');

/** A plain object that JSON can carry whole: no BigInt, no cycle, no lone surrogate. */
export const jsonObject: Rule = (v) => {
  if (!isPlainObject(v)) return 'must be a plain object';
  let json: string;
  try {
    json = JSON.stringify(v);
  } catch (error) {
    return `must be JSON-serialisable (${(error as Error).message.split('\n')[0]})`;
  }
  return isWellFormed(json) ? undefined : 'must not contain a lone UTF-16 surrogate';
};

/** `2026-01-31`, `2026-01-31T12:00:00Z`, `2026-01-31T12:00:00.000+02:00`: the forms ISO 8601 timestamps take in the API. */
const iso8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** A valid `Date`, or an ISO 8601 date or timestamp string (what the API accepts). */
export const isoDate: Rule = (v) => {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? 'must be a valid date' : undefined;
  return typeof v === 'string' && iso8601.test(v) && !Number.isNaN(Date.parse(v))
    ? undefined
    : 'must be a Date or an ISO 8601 string such as 2026-01-31T00:00:00Z';
};

/** `page` and `page_size` as the reference limits them. */
export const pageRules: ParamRules<{ page?: number; page_size?: number }> = {
  page: [integer(1)],
  page_size: [integer(1, 100)],
};

/** An object literal or `Object.create(null)`: not an array, a Date, a Map or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  let proto: unknown;
  try {
    proto = Object.getPrototypeOf(value);
  } catch {
    // A proxy whose getPrototypeOf trap throws is no plain object: refused, not a TypeError.
    return false;
  }
  return proto === Object.prototype || proto === null;
}

/**
 * Refuses an options argument that is not a plain object: `null`, a primitive, an array, a Date, a
 * Map, a boxed primitive, a function or a class instance throws one {@link InvalidRequestError} of
 * `operation` naming `field`; `undefined` passes (it means the defaults). Every constructor and
 * factory that takes options decides it here, once: left to themselves, `{ ...null }` and
 * `{ ...42 }` spread to `{}`, `check()` treats `null` as absent, and reading a field of `null`
 * throws a `TypeError`, so bad options would be accepted silently or fail the wrong way.
 */
export function checkOptionsObject(
  operation: string,
  options: unknown,
  field = 'options',
): asserts options is Record<string, unknown> | undefined {
  if (options === undefined || isPlainObject(options)) return;
  throw new InvalidRequestError(operation, [
    { field, message: `must be a plain object or undefined (got ${kindOf(options)})` },
  ]);
}

/**
 * {@link check} of an options argument: refused unless a plain object or `undefined` (see
 * {@link checkOptionsObject}), and its fields named `options.<name>`.
 */
export function checkOptions(
  operation: string,
  options: unknown,
  rules: Rules,
  cross?: CrossRule,
): Record<string, unknown> {
  checkOptionsObject(operation, options);
  return check(operation, options, rules, cross, 'options.');
}

/** What a value is, for an error message: its type or class, never its content (it may hold a key). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  // Never `undefined`: checkOptionsObject lets it through before asking.
  if (typeof value !== 'object') return `a ${typeof value}`;
  try {
    if (Array.isArray(value)) return 'an array';
    const name: unknown = Object.getPrototypeOf(value)?.constructor?.name;
    return typeof name === 'string' && name ? `an instance of ${name}` : 'an object with a prototype';
  } catch {
    // A revoked proxy, or one whose traps throw: still an answer.
    return 'an object that cannot be inspected';
  }
}

/**
 * A Redis client as `billing-sdk/redis` uses it: anything with a `sendCommand` method (node-redis's
 * clients, an adapter), or with `call` and a boolean `isCluster` (ioredis's `Redis` and `Cluster`).
 */
export const redisClient: Rule = (v) => {
  let sendCommand: unknown;
  let call: unknown;
  let isCluster: unknown;
  try {
    const client = v as { sendCommand?: unknown; call?: unknown; isCluster?: unknown } | null;
    ({ sendCommand, call, isCluster } = client ?? {});
  } catch {
    // A revoked proxy or a throwing getter is no client either.
  }
  return typeof sendCommand === 'function' || (typeof call === 'function' && typeof isCluster === 'boolean')
    ? undefined
    : 'must be a Redis client: node-redis (createClient, createCluster), ioredis (Redis, Cluster), or an object with sendCommand(args)';
};

/**
 * Checks `params` against `rules` and `cross`, and throws one {@link InvalidRequestError} listing
 * every problem, before anything is sent. Returns a fresh object with the known parameters that
 * are present: `null` counts as absent everywhere (field rules, cross-field rules and the request
 * built from the result), and an unknown key is refused rather than sent or silently dropped.
 * Options objects are checked the same way, their fields named with `prefix` (`options.timeout`).
 */
export function check(
  operation: string,
  params: unknown,
  rules: Rules,
  cross?: CrossRule,
  prefix = '',
): Record<string, unknown> {
  if (params !== undefined && params !== null && !isPlainObject(params)) {
    throw new InvalidRequestError(operation, [
      { field: prefix ? prefix.slice(0, -1) : 'params', message: 'must be a plain object' },
    ]);
  }
  const given = (params ?? {}) as Record<string, unknown>;
  const present: Record<string, unknown> = {};
  const issues: InvalidRequestIssue[] = [];
  // for…in, not Object.keys/entries: no arrays made on every call (the tracker's hot path).
  for (const key in given) {
    if (Object.hasOwn(given, key) && !Object.hasOwn(rules, key))
      issues.push({ field: prefix + key, message: 'is not a known parameter' });
  }
  for (const name in rules) {
    if (!Object.hasOwn(rules, name)) continue;
    const fieldRules = rules[name] as readonly Rule[];
    const value = given[name];
    const field = prefix + name;
    if (value === undefined || value === null || value === '') {
      const needed = fieldRules.includes(required);
      if (needed || value === '')
        issues.push({ field, message: needed ? 'is required' : 'must not be empty' });
      continue;
    }
    present[name] = value;
    ruleIssues(value, field, fieldRules, issues);
  }
  if (!issues.length && cross) issues.push(...cross(present));
  if (issues.length) throw new InvalidRequestError(operation, issues);
  return present;
}

/**
 * Checks the positional arguments of a method (a store's `key`, `account`, …) as {@link check}
 * checks named parameters: one {@link InvalidRequestError} listing every bad one. Every value goes to
 * its rules, `''` and `undefined` included: whether those are allowed is the rules' to say (an empty
 * key is a key like any other to a store).
 */
export function checkArgs(
  operation: string,
  args: readonly [field: string, rules: Rule[], value: unknown][],
): void {
  const issues: InvalidRequestIssue[] = [];
  for (const [field, rules, value] of args) ruleIssues(value, field, rules, issues);
  if (issues.length) throw new InvalidRequestError(operation, issues);
}

/** Adds to `issues` what the first of `rules` that fails says of `value` (nothing when all pass). */
function ruleIssues(
  value: unknown,
  field: string,
  rules: readonly Rule[],
  issues: InvalidRequestIssue[],
): void {
  for (const rule of rules) {
    const found = rule(value, field);
    if (found?.length)
      return void issues.push(...(typeof found === 'string' ? [{ field, message: found }] : found));
  }
}
