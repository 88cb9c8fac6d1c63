import type { APIPromise } from '../core/api-promise.js';
import type { RequestOptions } from '../core/options.js';
import type { PageEnvelope, PagePromise } from '../core/pagination.js';
import {
  boolean,
  type CrossRule,
  oneOf,
  pageRules,
  positiveNumber,
  required,
  text,
} from '../internal/checks.js';
import { endpoint } from '../internal/endpoint.js';
import { APIResource } from '../internal/resource.js';
import { envelope } from '../schemas/common.js';
import { type CreatedInvoice, CreatedInvoiceSchema } from '../schemas/created-invoice.js';
import { INVOICE_STATUSES, type Invoice, InvoiceSchema } from '../schemas/invoice.js';

/** Parameters of {@link Invoices.list}: `account_ref_id` or `email` (or both). */
export interface InvoiceListParams {
  /** The account whose invoices to list. */
  account_ref_id?: string | undefined;
  /** The customer e-mail whose invoices to list. */
  email?: string | undefined;
  /** Only invoices in this status. */
  status?: (typeof INVOICE_STATUSES)[number] | undefined;
  /** Page to start from (1-based). Default 1. */
  page?: number | undefined;
  /** Items per page, 1–100. Default 20. */
  page_size?: number | undefined;
}

/** Parameters of {@link Invoices.create}. */
export interface InvoiceCreateParams {
  /** Manage id of the product invoiced. */
  product_manage_id: string;
  /**
   * Amount to invoice: a number above 0, sent as given. The reference types it as a number and does
   * not say whether it is in major units (`250` for 250.00) or minor units (`25000`): check against
   * your gateway (for example with a sandbox key) before invoicing real customers.
   */
  amount: number;
  /** E-mail address of the customer billed; the invoice goes there when `send_to_customer` is true. */
  customer_email: string;
  /**
   * Lowercase currency code, e.g. `usd` (the SDK refuses anything but lowercase letters). Which
   * currency applies when omitted is not stated by the reference.
   */
  currency?: string | undefined;
  /** Free-text description of the invoice; where it appears is not stated by the reference. */
  description?: string | undefined;
  /** Your identifier of the account to attach the invoice to; optional in the reference. */
  account_ref_id?: string | undefined;
  /** `true` e-mails the invoice to the customer. */
  send_to_customer?: boolean | undefined;
  /** Where the hosted page sends the customer after paying. */
  return_url?: string | undefined;
}

const lowercaseCode = (v: unknown) =>
  typeof v === 'string' && /^[a-z]+$/.test(v) ? undefined : 'must be a lower-case code, e.g. usd';
const needsAccountOrEmail: CrossRule = (p) =>
  p.account_ref_id === undefined && p.email === undefined
    ? [{ field: 'account_ref_id', message: 'or email is required' }]
    : [];

const createInvoice = endpoint<InvoiceCreateParams, CreatedInvoice>({
  operation: 'invoices.create',
  method: 'POST',
  rules: {
    product_manage_id: [required, text],
    amount: [required, positiveNumber],
    customer_email: [required, text],
    currency: [lowercaseCode],
    description: [text],
    account_ref_id: [text],
    send_to_customer: [boolean],
    return_url: [text],
  },
  // Not idempotent: once the request may have reached the server it is never sent again.
  build: (body) => ({ path: 'invoices/create/', body }),
  schema: CreatedInvoiceSchema,
});

const listInvoices = endpoint<InvoiceListParams, PageEnvelope<Invoice>>({
  operation: 'invoices.list',
  method: 'GET',
  rules: { account_ref_id: [text], email: [text], status: [oneOf(INVOICE_STATUSES)], ...pageRules },
  cross: needsAccountOrEmail,
  build: (query) => ({ path: 'invoices/', query }),
  schema: envelope(InvoiceSchema),
});

/** `billing.invoices`: invoices of an account or a customer e-mail. */
export class Invoices extends APIResource {
  /**
   * Creates a hosted invoice and returns its payment URL; optionally e-mails it. Never retried once
   * the request may have reached the server (a retry could create a second invoice).
   *
   * @example
   * ```ts
   * const { hosted_invoice_url } = await billing.invoices.create({
   *   product_manage_id: 'prod_consulting', amount: 250, customer_email: 'ada@example.com', currency: 'usd',
   * });
   * ```
   */
  create(params: InvoiceCreateParams, options?: RequestOptions): APIPromise<CreatedInvoice> {
    return this._call(createInvoice, params, options);
  }

  /**
   * Lists invoices by account or customer e-mail. Iterate with `for await` to walk every page.
   *
   * @example
   * ```ts
   * for await (const invoice of billing.invoices.list({ account_ref_id: 'acct_1', status: 'open' })) {
   *   console.log(invoice.processor_invoice_id, invoice.amount_due, invoice.hosted_invoice_url);
   * }
   * ```
   */
  list(params: InvoiceListParams, options?: RequestOptions): PagePromise<Invoice> {
    return this._list(listInvoices, params, options);
  }
}
