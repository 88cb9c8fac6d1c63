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
