import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';

/** What `invoices.create` returns. */
export interface CreatedInvoice {
  /** URL of the processor-hosted page where the customer pays the new invoice. */
  hosted_invoice_url: string;
  /** The payment processor's id of the new invoice; `invoices.list` reports it under the same name. */
  processor_invoice_id: string;
  /** Whether the service e-mailed the invoice to the customer (asked for with `send_to_customer`). */
  email_sent: boolean;
  /**
   * The request's `return_url`, echoed. The reference types it as a string; the SDK also accepts it
   * absent or `null`, since the reference does not say what is sent when the request had none.
   */
  return_url?: string | null | undefined;
}

/** Validates a {@link CreatedInvoice}; unknown fields are kept. */
export const CreatedInvoiceSchema: Schema<CreatedInvoice> = z.looseObject({
  hosted_invoice_url: z.string(),
  processor_invoice_id: z.string(),
  email_sent: z.boolean(),
  return_url: z.optional(z.nullable(z.string())),
});
