import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client, obj, results } from './helpers.js';

const INVOICE_FIELDS = [
  'account_ref_id',
  'amount_due',
  'amount_paid',
  'created_at',
  'currency',
  'customer_email',
  'due_date',
  'hosted_invoice_url',
  'invoice_date',
  'is_paid',
  'period_end',
  'period_start',
  'processor_invoice_id',
  'processor_subscription_id',
  'product_manage_id',
  'status',
  'updated_at',
].sort();

describe('mock server: invoices', () => {
  const mock = useMockServer();
  const api = client(mock);

  it('lists invoices by account with every documented field', async () => {
    const body = obj((await api.get(`invoices/?account_ref_id=${DEMO.accounts.active}`)).body);
    expect(body.count).toBe(45);
    const first = results(body)[0] ?? {};
    expect(Object.keys(first).sort()).toEqual(INVOICE_FIELDS);
    expect(String(first.hosted_invoice_url)).toMatch(new RegExp(`^${mock.server.appUrl}/i/in_mock_\\d{4}$`));
    expect(first.is_paid).toBe(first.status === 'paid');
  });

  it('holds the documented number of invoices per status', async () => {
    for (const [account, { invoices }] of Object.entries(DEMO.counts)) {
      for (const status of ['draft', 'open', 'paid', 'uncollectible', 'void']) {
        const body = obj((await api.get(`invoices/?account_ref_id=${account}&status=${status}`)).body);
        const expected = (invoices as Record<string, number | undefined>)[status] ?? 0;
        expect(body.count, `${account} ${status}`).toBe(expected);
        expect(results(body).every((i) => i.status === status)).toBe(true);
      }
    }
  });

  it('lists by e-mail (case-insensitive), and by both', async () => {
    const byEmail = obj((await api.get(`invoices/?email=${encodeURIComponent('MULTI@example.com')}`)).body);
    expect(byEmail.count).toBe(3);
    const both = obj(
      (await api.get(`invoices/?account_ref_id=${DEMO.accounts.active}&email=multi@example.com`)).body,
    );
    expect(both.count).toBe(0);
  });

  it('answers an empty list for an unknown e-mail and 404 for an unknown account', async () => {
    const body = obj((await api.get('invoices/?email=nobody@example.com')).body);
    expect(body).toEqual({ count: 0, next: null, previous: null, results: [] });
    const r = await api.get('invoices/?account_ref_id=acct_nobody');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Account not found or invalid subscription tier' });
  });

  it('requires account_ref_id or email', async () => {
    const r = await api.get('invoices/');
    expect(r.status).toBe(400);
    expect(Object.keys(obj(r.body))).toEqual(['account_ref_id']);
    expect(obj(r.body).account_ref_id).toEqual([expect.any(String)]);
  });

  it('rejects an unknown invoice status', async () => {
    const r = await api.get(`invoices/?account_ref_id=${DEMO.accounts.active}&status=late`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ status: ['"late" is not a valid choice.'] });
  });

  it('creates an invoice that then appears first in the list', async () => {
    const r = await api.post('invoices/create/', {
      product_manage_id: DEMO.products.consulting.manage_id,
      amount: 125.5,
      customer_email: DEMO.emails.active,
      currency: 'eur',
      description: 'Workshop',
      account_ref_id: DEMO.accounts.active,
      send_to_customer: true,
      return_url: 'https://app.example.com/thanks',
    });
    expect(r.status).toBe(201);
    const created = obj(r.body);
    expect(Object.keys(created).sort()).toEqual(
      ['email_sent', 'hosted_invoice_url', 'processor_invoice_id', 'return_url'].sort(),
    );
    expect(created.email_sent).toBe(true);
    expect(created.return_url).toBe('https://app.example.com/thanks');
    expect(created.hosted_invoice_url).toBe(
      `${mock.server.appUrl}/i/${String(created.processor_invoice_id)}`,
    );

    const body = obj((await api.get(`invoices/?account_ref_id=${DEMO.accounts.active}&status=open`)).body);
    expect(body.count).toBe(DEMO.counts.acct_active.invoices.open + 1);
    expect(results(body)[0]).toMatchObject({
      processor_invoice_id: created.processor_invoice_id,
      status: 'open',
      is_paid: false,
      amount_due: 125.5,
      amount_paid: 0,
      currency: 'eur',
      processor_subscription_id: '',
      product_manage_id: DEMO.products.consulting.manage_id,
      period_start: null,
      period_end: null,
      hosted_invoice_url: created.hosted_invoice_url,
    });
  });

  it('defaults email_sent to false and return_url to an empty string', async () => {
    const r = await api.post('invoices/create/', {
      product_manage_id: DEMO.products.ebook.manage_id,
      amount: 19,
      customer_email: 'new-buyer@example.com',
    });
    expect(r.status).toBe(201);
    expect(obj(r.body)).toMatchObject({ email_sent: false, return_url: '' });
    const listed = obj((await api.get('invoices/?email=new-buyer@example.com')).body);
    expect(results(listed)[0]).toMatchObject({ account_ref_id: '', currency: 'usd', amount_due: 19 });
  });

  it('introduces a new account_ref_id through invoice creation', async () => {
    await api.post('invoices/create/', {
      product_manage_id: DEMO.products.ebook.manage_id,
      amount: 19,
      customer_email: 'fresh@example.com',
      account_ref_id: 'acct_fresh',
    });
    const body = obj((await api.get('invoices/?account_ref_id=acct_fresh')).body);
    expect(body.count).toBe(1);
  });

  it('validates the body with a field map listing every problem', async () => {
    const missing = await api.post('invoices/create/', {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      product_manage_id: ['This field is required.'],
      amount: ['This field is required.'],
      customer_email: ['This field is required.'],
    });
    const invalid = await api.post('invoices/create/', {
      product_manage_id: 'prod_nope',
      amount: -1,
      customer_email: 'not-an-email',
      currency: 'EUR',
      send_to_customer: 'yes',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      product_manage_id: ['Product not found.'],
      amount: ['Ensure this value is greater than 0.'],
      customer_email: ['Enter a valid email address.'],
      currency: ['Enter a lowercase ISO 4217 currency code.'],
      send_to_customer: ['Must be a valid boolean.'],
    });
    const zero = await api.post('invoices/create/', {
      product_manage_id: DEMO.products.ebook.manage_id,
      amount: 'ten',
      customer_email: 'a@b.c',
    });
    expect(zero.body).toEqual({ amount: ['A valid number is required.'] });
  });

  it('answers invalid JSON with a non_field_errors map and creates nothing', async () => {
    const before = mock.server.store.invoices().length;
    const r = await api.post('invoices/create/', '{"amount": ');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ non_field_errors: ['Invalid JSON.'] });
    expect(mock.server.store.invoices().length).toBe(before);
  });
});
