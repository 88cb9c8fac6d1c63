import { MESSAGES } from '../errors.js';
import type { FieldErrors } from '../validation.js';

/** Reported for a body field the control route does not know (a typo would otherwise be ignored). */
export const UNKNOWN_FIELD = 'Unknown field.';

/** Adds {@link UNKNOWN_FIELD} for every body field not in `allowed`. */
export function rejectUnknownFields(
  body: Record<string, unknown>,
  allowed: readonly string[],
  errors: FieldErrors,
): void {
  for (const name of Object.keys(body)) {
    if (!allowed.includes(name)) errors.add(name, UNKNOWN_FIELD);
  }
}

/**
 * An optional string field that must be one of `allowed`; reports the DRF "not a valid choice"
 * message (or the string type message) and reads as undefined then.
 */
export function bodyChoice<T extends string>(
  body: Record<string, unknown>,
  name: string,
  allowed: readonly T[],
  errors: FieldErrors,
): T | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    errors.add(name, MESSAGES.string);
    return undefined;
  }
  if ((allowed as readonly string[]).includes(value)) return value as T;
  errors.add(name, MESSAGES.choice(value));
  return undefined;
}
