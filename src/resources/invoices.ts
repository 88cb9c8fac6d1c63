import { boolean, check, oneOf, pageRules, positiveNumber, required, text } from '../core/checks.js';
import type { RequestOptions } from '../core/options.js';
import type { PagePromise } from '../core/pagination.js';
import type { ApiCore } from '../core/request.js';
import { envelope } from '../schemas/common.js';
import { type CreatedInvoice, CreatedInvoiceSchema } from '../schemas/created-invoice.js';
import { INVOICE_STATUSES, type Invoice, InvoiceSchema } from '../schemas/invoice.js';

/** Parameters of {@link Invoices.list}: `account_ref_id` or `email` (or both). */
export interface InvoiceListParams {
  /** The account whose invoices to list. */
  account_ref_id?: string;
  /** The customer e-mail whose invoices to list. */
  email?: string;
  /** Only invoices in this status. */
  status?: (typeof INVOICE_STATUSES)[number];
  /** Page to start from (1-based). Default 1. */
  page?: number;
  /** Items per page, 1–100. Default 20. */
  page_size?: number;
}

/** Parameters of {@link Invoices.create}. */
export interface InvoiceCreateParams {
  /** Manage id of the product invoiced. */
  product_manage_id: string;
  /** Amount, a number > 0. */
  amount: number;
  customer_email: string;
  /** Lower-case currency code, e.g. `usd`. */
  currency?: string;
  description?: string;
  account_ref_id?: string;
  /** `true` e-mails the invoice to the customer. */
  send_to_customer?: boolean;
  /** Where the hosted page sends the customer after paying. */
  return_url?: string;
}

const InvoicePage = envelope(InvoiceSchema);
const lowercaseCode = (v: unknown) =>
  v === undefined || (typeof v === 'string' && /^[a-z]+$/.test(v))
    ? undefined
    : 'must be a lower-case code, e.g. usd';
const createRules = {
  product_manage_id: [required, text],
  amount: [required, positiveNumber],
  customer_email: [required, text],
  currency: [lowercaseCode],
  description: [text],
  account_ref_id: [text],
  send_to_customer: [boolean],
  return_url: [text],
};
const listRules = { account_ref_id: [text], email: [text], status: [oneOf(INVOICE_STATUSES)], ...pageRules };
const needsAccountOrEmail = (p: Record<string, unknown>) =>
  p.account_ref_id === undefined && p.email === undefined
    ? [{ field: 'account_ref_id', message: 'or email is required' }]
    : [];

/** `billing.invoices`: invoices of an account or a customer e-mail. */
export class Invoices {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

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
  create(params: InvoiceCreateParams, options?: RequestOptions): Promise<CreatedInvoice> {
    return this.#core.call(options, () => ({
      operation: 'invoices.create',
      method: 'POST',
      path: 'invoices/create/',
      body: check('invoices.create', params, createRules),
      schema: CreatedInvoiceSchema,
    }));
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
    return this.#core.list(
      {
        operation: 'invoices.list',
        schema: InvoicePage,
        prepare: () => ({
          path: 'invoices/',
          query: check('invoices.list', params, listRules, needsAccountOrEmail),
        }),
      },
      options,
    );
  }
}
