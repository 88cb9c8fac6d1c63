import type { Hono } from 'hono';
import { appUrlFor } from '../config.js';
import { json, MESSAGES, notFound } from '../errors.js';
import { pageEnvelope, readPageParams } from '../pagination.js';
import { INVOICE_STATUSES } from '../records.js';
import { absoluteUrl, invoiceWire } from '../serialize.js';
import {
  bodyBoolean,
  bodyNumber,
  bodyString,
  FieldErrors,
  optionalChoice,
  optionalQuery,
  POSITIVE_NUMBER,
  readJsonObject,
} from '../validation.js';
import { queryOf, type RouteContext, route } from './context.js';

function isUrl(value: string): boolean {
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** `POST /invoices/create/` and `GET /invoices/`. */
export function registerInvoices(app: Hono, { store, config }: RouteContext): void {
  route(app, 'POST', '/api/invoices/create/', async (c) => {
    const parsed = await readJsonObject(c.req.raw);
    if (!parsed.ok) return parsed.response;
    const { body } = parsed;
    const errors = new FieldErrors();
    const productManageId = bodyString(body, 'product_manage_id', errors, true);
    const amount = bodyNumber(body, 'amount', errors, POSITIVE_NUMBER);
    const email = bodyString(body, 'customer_email', errors, true);
    const currency = bodyString(body, 'currency', errors, false);
    const description = bodyString(body, 'description', errors, false);
    const accountRefId = bodyString(body, 'account_ref_id', errors, false);
    const sendToCustomer = bodyBoolean(body, 'send_to_customer', errors);
    const returnUrl = bodyString(body, 'return_url', errors, false);
    if (productManageId !== undefined && !store.product(productManageId)) {
      errors.add('product_manage_id', MESSAGES.productNotFound);
    }
    if (email !== undefined && !email.includes('@')) errors.add('customer_email', MESSAGES.email);
    if (currency !== undefined && !/^[a-z]{3}$/.test(currency)) errors.add('currency', MESSAGES.currency);
    if (returnUrl !== undefined && returnUrl !== '' && !isUrl(returnUrl))
      errors.add('return_url', MESSAGES.url);
    if (!errors.empty || productManageId === undefined || amount === undefined || email === undefined) {
      return errors.toResponse();
    }
    // An invoice for an account_ref_id the service has not seen yet introduces that account.
    if (accountRefId && !store.account(accountRefId)) {
      store.addAccount({ account_ref_id: accountRefId, customer_email: email });
    }
    const invoice = store.addInvoice({
      account_ref_id: accountRefId ?? '',
      customer_email: email,
      product_manage_id: productManageId,
      amount_due: amount,
      currency: currency ?? 'usd',
      status: 'open',
      ...(description !== undefined ? { description } : {}),
    });
    return json(
      {
        hosted_invoice_url: absoluteUrl(invoice.hosted_invoice_url, appUrlFor(config, c.req.url)),
        processor_invoice_id: invoice.processor_invoice_id,
        email_sent: sendToCustomer === true,
        return_url: returnUrl ?? '',
      },
      201,
    );
  });

  route(app, 'GET', '/api/invoices/', (c) => {
    const query = queryOf(c.req.url);
    const errors = new FieldErrors();
    const page = readPageParams(query, errors);
    const status = optionalChoice(query, 'status', INVOICE_STATUSES, errors);
    const accountRefId = optionalQuery(query, 'account_ref_id');
    const email = optionalQuery(query, 'email');
    if (accountRefId === undefined && email === undefined) {
      errors.add('account_ref_id', 'This field is required when email is not given.');
    }
    if (!errors.empty) return errors.toResponse();
    // Unknown account: 404 like every account-scoped read; an unknown e-mail is just no match.
    if (accountRefId !== undefined && !store.account(accountRefId)) return notFound();
    const appUrl = appUrlFor(config, c.req.url);
    const items = store
      .invoices({
        ...(accountRefId !== undefined ? { account_ref_id: accountRefId } : {}),
        ...(email !== undefined ? { email } : {}),
        ...(status !== undefined ? { status } : {}),
      })
      .map((invoice) => invoiceWire(invoice, appUrl));
    return json(pageEnvelope(items, page, c.req.url));
  });
}
