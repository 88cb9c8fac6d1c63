import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';

/** The payment page for a subscription's failed invoice, or `null` when there is nothing to fix. */
export type FixSubscriptionResult = {
  /** Hosted payment URL of the subscription's failed invoice: send the customer there to pay it. */
  url: string;
} | null;

/** Validates the fix-subscription body: `{ url }`, or `null`/`{}` for an empty answer. */
export const FixSubscriptionSchema: Schema<{ url?: string | undefined } | null> = z.nullable(
  z.looseObject({ url: z.optional(z.string()) }),
);
