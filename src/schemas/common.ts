import * as z from 'zod/mini';
import type { PageEnvelope } from '../core/pagination.js';
import type { Schema } from '../internal/schema.js';

/**
 * An enum the API may extend: the documented values give autocompletion, and any other string
 * still type-checks, so a new server value never breaks a build or a response.
 */
export type OpenEnum<Known extends string> = Known | (string & {});

/** Timestamps are ISO 8601 strings; their format is not checked (a costly check that breaks on harmless changes). */
export const timestamp = z.string();

/** The paginated list envelope around `item`. Built once per resource, at import. */
export function envelope<T>(item: Schema<T>): Schema<PageEnvelope<T>> {
  return z.looseObject({
    count: z.number(),
    next: z.optional(z.nullable(z.string())),
    previous: z.optional(z.nullable(z.string())),
    results: z.array(item as unknown as z.ZodMiniType<T>),
  }) as unknown as Schema<PageEnvelope<T>>;
}
