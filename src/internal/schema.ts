import { type RequestContext, ResponseValidationError, type ValidationIssue } from '../core/errors/index.js';
import type { SdkLogger } from '../core/logger.js';
import type { ValidationMode } from '../core/options.js';
import { scrubValue } from '../util/redact.js';

/**
 * What core needs of a response schema. The SDK's schemas are zod schemas, but core and the public
 * types see only this shape, so no zod type reaches the published `.d.ts`.
 */
export interface Schema<T> {
  /** Returns the data (unknown fields kept) or the issues. */
  safeParse(input: unknown): SafeParseResult<T>;
}

/** Result of {@link Schema.safeParse}. */
export type SafeParseResult<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly SchemaIssue[] } };

/** One mismatch as the validator reports it. */
export interface SchemaIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly code: string;
}

/**
 * Checks a parsed body against its schema. `strict` throws, `warn` logs and returns the body as
 * received, `off` skips the check entirely (the cheapest path).
 */
export function validate<T>(
  schema: Schema<T>,
  body: unknown,
  mode: ValidationMode,
  request: RequestContext,
  logger: SdkLogger,
  secrets: readonly string[] = [],
): T {
  if (mode === 'off') return body as T;
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = result.error.issues.map(toIssue);
  // The error keeps the body: never with a secret the server echoed in it.
  if (mode === 'strict') throw new ResponseValidationError(request, issues, scrubValue(body, secrets));
  logger.log('warn', new ResponseValidationError(request, issues, body).message);
  return body as T;
}

function toIssue(issue: SchemaIssue): ValidationIssue {
  // zod/mini ships no locale, so its messages are a bare "Invalid input": say what was expected.
  const expected = (issue as { expected?: unknown }).expected;
  return {
    path: issue.path.map((p) => (typeof p === 'number' ? p : String(p))),
    message: typeof expected === 'string' ? `expected ${expected}` : issue.message,
    code: issue.code,
  };
}
