import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';

/** What `invoices.create` returns. */
export interface CreatedInvoice {
  /** The hosted page where the customer pays. */
  hosted_invoice_url: string;
  processor_invoice_id: string;
  /** Whether the invoice was e-mailed to the customer. */
  email_sent: boolean;
  /** Echo of the request's `return_url`. */
  return_url?: string | null;
}

/** Validates a {@link CreatedInvoice}; unknown fields are kept. */
export const CreatedInvoiceSchema: Schema<CreatedInvoice> = z.looseObject({
  hosted_invoice_url: z.string(),
  processor_invoice_id: z.string(),
  email_sent: z.boolean(),
  return_url: z.optional(z.nullable(z.string())),
});
