import { InvalidRequestError } from '../core/errors/index.js';
import { isWellFormed } from '../util/well-formed.js';
import type { SpooledEvent } from './spool.js';

/** How deep {@link checkStorable} looks: deeper nests are JSON's, left to the backend. */
const MAX_DEPTH = 64;

/** What is wrong with `text` for a spool, or undefined. */
const problemOf = (text: string): string | undefined =>
  text.includes('\0')
    ? 'holds a NUL character (U+0000), which a spool cannot store (PostgreSQL jsonb refuses it)'
    : isWellFormed(text)
      ? undefined
      : 'holds a lone UTF-16 surrogate, which a spool cannot store as it is (PostgreSQL jsonb refuses it)';

/** The first string (key or value) of `value` a spool cannot store: its path and why. */
function firstProblem(
  value: unknown,
  path: string,
  depth: number,
): { field: string; message: string } | undefined {
  if (typeof value === 'string') {
    const message = problemOf(value);
    return message ? { field: path, message } : undefined;
  }
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = firstProblem(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  // for…in with hasOwn, as Object.entries reads, without its arrays on every event.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const inner = (value as Record<string, unknown>)[key];
    const field = path ? `${path}.${key}` : key;
    const keyProblem = problemOf(key);
    // The name itself is not quoted: it cannot be printed as it is.
    if (keyProblem) return { field: path || 'event', message: `has a property whose name ${keyProblem}` };
    const found = firstProblem(inner, field, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Refuses, before anything is written, events some durable spool could not store: a string (a
 * metadata value or key, or any field) holding NUL or a lone surrogate. Every spool keeps this one
 * rule, so an event a memory or file spool takes is never one PostgreSQL would refuse later, and a
 * refused event never reaches the caller's transaction (where a failed statement aborts it).
 *
 * @throws {@link InvalidRequestError} naming the field (`metadata.note`), under `operation`.
 */
export function checkStorable(operation: string, events: readonly SpooledEvent[]): void {
  for (const event of events) {
    const problem = firstProblem(event, '', 0);
    if (problem) throw new InvalidRequestError(operation, [problem]);
  }
}
