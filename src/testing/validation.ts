import { fieldErrors, invalidJson, MESSAGES } from './errors.js';

/**
 * Collects every field problem of one request, so a 400 lists all of them at once like the
 * service does, instead of failing on the first.
 */
export class FieldErrors {
  readonly #fields: Record<string, string[]> = {};

  /** Adds a message to a field. */
  add(field: string, message: string): void {
    const list = this.#fields[field];
    if (list) list.push(message);
    else this.#fields[field] = [message];
  }

  /** True when nothing was added, i.e. the request may proceed. */
  get empty(): boolean {
    return Object.keys(this.#fields).length === 0;
  }

  /** The 400 field-map response of everything collected. */
  toResponse(): Response {
    return fieldErrors(this.#fields);
  }
}

/**
 * Reads required query parameters; a missing or empty one is reported as required. The values
 * of missing fields are `''`, so callers must check `errors.empty` before using them.
 */
export function requireQuery<K extends string>(
  query: URLSearchParams,
  names: readonly K[],
  errors: FieldErrors,
): Record<K, string> {
  const values = {} as Record<K, string>;
  for (const name of names) {
    const value = query.get(name);
    if (value === null || value === '') errors.add(name, MESSAGES.required);
    values[name] = value ?? '';
  }
  return values;
}

/** An optional query parameter; empty counts as absent, as with HTML form submissions. */
export function optionalQuery(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  return value === null || value === '' ? undefined : value;
}

/** Validates an optional enum filter, reporting the DRF "not a valid choice" message. */
export function optionalChoice<T extends string>(
  query: URLSearchParams,
  name: string,
  allowed: readonly T[],
  errors: FieldErrors,
): T | undefined {
  const value = optionalQuery(query, name);
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  errors.add(name, MESSAGES.choice(value));
  return undefined;
}

/** A parsed POST body, or the 400 response to send instead. */
export type BodyResult = { ok: true; body: Record<string, unknown> } | { ok: false; response: Response };

/**
 * Parses a POST body as a JSON object. An empty body counts as `{}` so that the field map lists
 * every required field; anything that is not JSON answers the reference's "Invalid JSON." map.
 */
export async function readJsonObject(request: Request): Promise<BodyResult> {
  const text = await request.text();
  if (text.trim() === '') return { ok: true, body: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, response: invalidJson() };
  }
  if (!isPlainObject(parsed)) {
    return { ok: false, response: fieldErrors({ non_field_errors: [MESSAGES.notAnObject] }) };
  }
  return { ok: true, body: parsed };
}

/** True for a JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * How one body field is checked. Every body field follows the same DRF order (required, then
 * type, then value checks, reporting only the first problem), so the fields differ only in these.
 */
export interface FieldRule<T> {
  /** The JSON type (and representation) the field must have. */
  is: (value: unknown) => value is T;
  /** Reported when `is` fails. */
  type: string;
  /** Value checks after the type check, in order; the first that fails is reported. */
  checks?: readonly (readonly [check: (value: T) => boolean, message: string])[];
}

/**
 * Reads one body field by its rule. `undefined` and `null` both count as absent (reported only
 * when `required`); a field with a problem also reads as undefined, so callers check `errors`.
 */
export function bodyField<T>(
  body: Record<string, unknown>,
  name: string,
  errors: FieldErrors,
  required: boolean,
  rule: FieldRule<T>,
): T | undefined {
  const value = body[name];
  if (value === undefined || value === null) {
    if (required) errors.add(name, MESSAGES.required);
    return undefined;
  }
  if (!rule.is(value)) {
    errors.add(name, rule.type);
    return undefined;
  }
  const failed = rule.checks?.find(([check]) => !check(value));
  if (failed) {
    errors.add(name, failed[1]);
    return undefined;
  }
  return value;
}

const isString = (value: unknown): value is string => typeof value === 'string';

const STRING: FieldRule<string> = { is: isString, type: MESSAGES.string };
const NON_BLANK_STRING: FieldRule<string> = {
  ...STRING,
  checks: [[(value) => value.trim() !== '', MESSAGES.blank]],
};

/** A positive integer (JSON number), as usage `quantity` must be. */
export const POSITIVE_INTEGER: FieldRule<number> = {
  is: (value): value is number => typeof value === 'number' && Number.isSafeInteger(value),
  type: MESSAGES.integer,
  checks: [[(value) => value >= 1, MESSAGES.minOne]],
};

/** A positive finite JSON number, as an invoice `amount` must be. */
export const POSITIVE_NUMBER: FieldRule<number> = {
  is: (value): value is number => typeof value === 'number' && Number.isFinite(value),
  type: MESSAGES.number,
  checks: [[(value) => value > 0, MESSAGES.positive]],
};

/** A string body field; `required` fields must also be non-blank. */
export function bodyString(
  body: Record<string, unknown>,
  name: string,
  errors: FieldErrors,
  required: boolean,
): string | undefined {
  return bodyField(body, name, errors, required, required ? NON_BLANK_STRING : STRING);
}

/** A required numeric field; `rule` ({@link POSITIVE_INTEGER}, {@link POSITIVE_NUMBER}) says which numbers pass. */
export function bodyNumber(
  body: Record<string, unknown>,
  name: string,
  errors: FieldErrors,
  rule: FieldRule<number>,
): number | undefined {
  return bodyField(body, name, errors, true, rule);
}

/** An optional boolean field; `null` counts as absent. */
export function bodyBoolean(
  body: Record<string, unknown>,
  name: string,
  errors: FieldErrors,
): boolean | undefined {
  return bodyField(body, name, errors, false, {
    is: (value): value is boolean => typeof value === 'boolean',
    type: MESSAGES.boolean,
  });
}

/** An optional JSON-object field such as `metadata`; `null` counts as absent. */
export function bodyObject(
  body: Record<string, unknown>,
  name: string,
  errors: FieldErrors,
): Record<string, unknown> | null {
  return bodyField(body, name, errors, false, { is: isPlainObject, type: MESSAGES.object }) ?? null;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Parses an ISO 8601 date or date-time to epoch milliseconds, or `undefined` when unparsable.
 * A date-time without an offset is taken as UTC (the service's timestamps are all UTC).
 */
export function parseIsoTimestamp(value: string): number | undefined {
  const match = ISO_8601.exec(value);
  if (!match) return undefined;
  // Date.parse rolls a day that does not exist over into the next month (2026-02-30 → March 2):
  // such a day is no timestamp. 2028-02-29 exists; 2026-02-29 does not.
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate())
    return undefined;
  let text = value.replace(' ', 'T');
  // Date.parse reads at most milliseconds reliably; drop the rest of a longer fraction.
  text = text.replace(/(\.\d{3})\d+/, '$1').replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  if (text.includes('T') && match[1] === undefined) text += 'Z';
  else if (!text.includes('T')) text += 'T00:00:00Z';
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
