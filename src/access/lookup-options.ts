import { abortSignal, check, isPlainObject, type Rule } from '../internal/checks.js';
import { NO_OPTIONS } from './lookups.js';
import type { AccessLookupOptions } from './types.js';

/** The options of one lookup; `outcome` is the caller's object, filled, so it is checked as one. */
export const lookupOptionRules = {
  signal: [abortSignal],
  outcome: [(v: unknown) => (isPlainObject(v) ? undefined : 'must be a plain object')],
} satisfies Record<keyof AccessLookupOptions, Rule[]>;

/**
 * A lookup's options, checked: `options` holding nothing but a valid `signal` and `outcome` (what
 * the gate passes on every request) is read by name, each field once; anything else goes to
 * `check`, which accepts what it accepts (a `null`) and refuses the rest in its own words. By
 * name because check's walk is generic: inside a framework it cost the gate about 1 µs a request
 * (`npm run bench -- --gate`, Express). A property test holds the two to the same answers.
 */
export function lookupOptionsOf(
  operation: string,
  options: AccessLookupOptions | undefined,
): AccessLookupOptions {
  if (options === undefined) return NO_OPTIONS;
  return (
    byName(options) ??
    (check(operation, options, lookupOptionRules, undefined, 'options.') as AccessLookupOptions)
  );
}

/** `{ signal, outcome }` of options with no other field and both valid or absent, else `undefined`. */
function byName(options: unknown): AccessLookupOptions | undefined {
  if (!isPlainObject(options)) return undefined;
  for (const key in options) {
    if (Object.hasOwn(options, key) && key !== 'signal' && key !== 'outcome') return undefined;
  }
  const { signal, outcome } = options as AccessLookupOptions;
  // A `null` (absent to check) or `''` (refused) is check's to read, as is any other value.
  const valid =
    (signal === undefined || (signal !== null && !abortSignal(signal))) &&
    (outcome === undefined || isPlainObject(outcome));
  return valid ? { signal, outcome } : undefined;
}
