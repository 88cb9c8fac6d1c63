import { abortSignal, check, isPlainObject, type Rule } from '../internal/checks.js';
import { NO_OPTIONS } from './lookups.js';
import type { AccessLookupOptions } from './types.js';

/** The options of one lookup; `outcome` is the caller's object, filled, so it is checked as one. */
export const lookupOptionRules = {
  signal: [abortSignal],
  outcome: [(v: unknown) => (isPlainObject(v) ? undefined : 'must be a plain object')],
} satisfies Record<keyof AccessLookupOptions, Rule[]>;

/**
 * A lookup's options, checked. Options holding no field but `signal` and `outcome` are read once,
 * by name; when there is no signal and the outcome is a plain object (what the gate passes on every
 * request) they are taken as read, and anything else goes to `check` (on what was read, so no
 * getter is read twice), which accepts what it accepts (a `null`) and refuses the rest in its own
 * words. By name because check's walk is generic: inside a framework it cost the gate about 1 µs
 * a request (`npm run bench -- --gate`, Express). A property test holds the two to the same answers.
 */
export function lookupOptionsOf(
  operation: string,
  options: AccessLookupOptions | undefined,
): AccessLookupOptions {
  if (options === undefined) return NO_OPTIONS;
  const read = byName(options);
  if (read && read.signal === undefined && (read.outcome === undefined || isPlainObject(read.outcome))) {
    return read;
  }
  return check(operation, read ?? options, lookupOptionRules, undefined, 'options.') as AccessLookupOptions;
}

/** `{ signal, outcome }` of plain options with no other field, each read once; else `undefined`. */
function byName(options: unknown): AccessLookupOptions | undefined {
  if (!isPlainObject(options)) return undefined;
  for (const key in options) {
    if (Object.hasOwn(options, key) && key !== 'signal' && key !== 'outcome') return undefined;
  }
  const { signal, outcome } = options as AccessLookupOptions;
  return { signal, outcome };
}
