import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';
import { type OpenEnum, timestamp } from './common.js';

/** Documented invoice statuses. */
export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;

/** Status of an invoice; other values the API may add are kept as strings. */
export type InvoiceStatus = OpenEnum<(typeof INVOICE_STATUSES)[number]>;

/** An invoice of the payment processor. */
export interface Invoice {
  processor_invoice_id: string;
  account_ref_id: string;
  status: InvoiceStatus;
  is_paid: boolean;
  amount_due: number;
  amount_paid: number;
  /** Lower-case currency code. */
  currency: string;
  customer_email: string;
  /** ISO 8601 UTC. */
  invoice_date: string;
  /** ISO 8601 UTC. */
  due_date: string;
  /** ISO 8601 UTC, or null. */
  period_start: string | null;
  /** ISO 8601 UTC, or null. */
  period_end: string | null;
  /** Page where the customer pays this invoice. */
  hosted_invoice_url: string;
  /** Empty string when the invoice is not tied to a subscription. */
  processor_subscription_id: string;
  product_manage_id: string;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC. */
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
