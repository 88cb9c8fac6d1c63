import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import { type OpenEnum, timestamp } from './common.js';

import { INVOICE_STATUSES } from './statuses.js';

export { INVOICE_STATUSES };

/** Status of an invoice: one of {@link INVOICE_STATUSES}, or another string the service may add later. */
export type InvoiceStatus = OpenEnum<(typeof INVOICE_STATUSES)[number]>;

/**
 * An invoice of the payment processor, as `invoices.list` returns it.
 *
 * Money: {@link Invoice.amount_due} and {@link Invoice.amount_paid} are JSON numbers whose unit the
 * reference does not state, while {@link Transaction.amount} and the prices of tiers and products
 * are decimal strings. Do not mix the two without deciding, for your gateway, what the numbers
 * mean.
 */
export interface Invoice {
  /** The payment processor's id of the invoice. */
  processor_invoice_id: string;
  /** Your identifier of the account the invoice belongs to, echoed by the service. */
  account_ref_id: string;
  /**
   * One of `draft`, `open`, `paid`, `uncollectible`, `void` (the reference's list). An open enum: a
   * value the service adds later is kept as a string, so handle the unknown case. Transitions
   * between statuses are not stated by the reference.
   */
  status: InvoiceStatus;
  /**
   * Whether the invoice is paid. The reference does not state how it relates to `status` or to
   * `amount_paid` (for example after a partial payment).
   */
  is_paid: boolean;
  /**
   * Amount due, as the service sends it: a JSON number, passed through unchanged. The reference
   * types it as a number and does not say whether it is in major units (`12.50`) or minor units
   * (`1250`), nor whether it already deducts `amount_paid`: check against your gateway before
   * doing arithmetic or showing it to a customer. In major units it is a binary float, so round to
   * the currency's minor unit before comparing or summing. Its currency is {@link Invoice.currency}.
   */
  amount_due: number;
  /**
   * Amount paid so far, as the service sends it: a JSON number, in the same unit as `amount_due`.
   * The reference types it as a number and does not say whether it is in major units (`12.50`) or
   * minor units (`1250`): check against your gateway before doing arithmetic.
   */
  amount_paid: number;
  /**
   * Currency of `amount_due` and `amount_paid`: a lowercase currency code (the reference's words),
   * e.g. `usd`. The reference does not name the code list (ISO 4217 is not stated).
   */
  currency: string;
  /** The customer's e-mail address; the reference says e-mail addresses appear for identification only. */
  customer_email: string;
  /** Date of the invoice: an ISO 8601 UTC string. The SDK does not parse it or check its format. */
  invoice_date: string;
  /** When payment is due: an ISO 8601 UTC string. */
  due_date: string;
  /**
   * Start of the period the invoice covers: an ISO 8601 UTC string, or `null`. The reference allows
   * `null` without saying when it occurs (a one-off invoice is a likely case, not a stated one).
   */
  period_start: string | null;
  /** End of the period the invoice covers: an ISO 8601 UTC string, or `null` (as for `period_start`). */
  period_end: string | null;
  /** URL of the processor-hosted page where the customer views and pays this invoice. */
  hosted_invoice_url: string;
  /**
   * The payment processor's id of the subscription the invoice bills; an empty string (`''`, not
   * `null`) when the invoice is not tied to a subscription, so test it with a truthiness check.
   */
  processor_subscription_id: string;
  /** `manage_id` of the invoiced product (see {@link Product.manage_id}). */
  product_manage_id: string;
  /** When the service created the record: an ISO 8601 UTC string. */
  created_at: string;
  /** When the service last changed the record: an ISO 8601 UTC string. */
  updated_at: string;
}

/** Validates an {@link Invoice}; unknown fields are kept. */
export const InvoiceSchema: Schema<Invoice> = z.looseObject({
  processor_invoice_id: z.string(),
  account_ref_id: z.string(),
  status: z.string(),
  is_paid: z.boolean(),
  amount_due: z.number(),
  amount_paid: z.number(),
  currency: z.string(),
  customer_email: z.string(),
  invoice_date: timestamp,
  due_date: timestamp,
  period_start: z.nullable(timestamp),
  period_end: z.nullable(timestamp),
  hosted_invoice_url: z.string(),
  processor_subscription_id: z.string(),
  product_manage_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});
