import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  BadRequestError,
  InternalServerError,
  InvalidRequestError,
} from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();
const billing = () => clientFor(mock.server);
const create = {
  product_manage_id: 'prod_consulting',
  amount: 250,
  customer_email: 'ada@example.com',
  currency: 'usd',
};

describe('invoices.create', () => {
  it('creates a hosted invoice that then appears in the list', async () => {
    const created = await billing().invoices.create({
      ...create,
      account_ref_id: 'acct_empty',
      send_to_customer: true,
      return_url: 'https://app.example.com/done',
    });
    expect(created.hosted_invoice_url).toMatch(/^http/);
    expect(created.email_sent).toBe(true);
    expect(created.return_url).toBe('https://app.example.com/done');
    const listed = await billing().invoices.list({ account_ref_id: 'acct_empty' });
    expect(listed.results.map((i) => i.processor_invoice_id)).toEqual([created.processor_invoice_id]);
    expect(listed.results[0]?.status).toBe('open');
  });

  it('is never retried after a 503 (the invoice may exist)', async () => {
    mock.server.faults.add({ path: '/api/invoices/create/', status: 503, headers: { 'retry-after': '0' } });
    expect(await caught(() => billing().invoices.create(create))).toBeInstanceOf(InternalServerError);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('is never retried when the connection dies after the server committed it', async () => {
    mock.server.faults.add({ path: '/api/invoices/create/', reset: 'after' });
    expect(
      await caught(() => billing().invoices.create({ ...create, account_ref_id: 'acct_empty' })),
    ).toBeInstanceOf(APIConnectionError);
    expect(mock.server.requests.count()).toBe(1);
    expect((await billing().invoices.list({ account_ref_id: 'acct_empty' })).count).toBe(1);
  });

  it.each([
    [{ amount: 0 }, 'amount'],
    [{ amount: Number.NaN }, 'amount'],
    [{ currency: 'USD' }, 'currency'],
    [{ customer_email: '' }, 'customer_email'],
    [{ product_manage_id: undefined }, 'product_manage_id'],
    [{ send_to_customer: 'yes' }, 'send_to_customer'],
  ])('refuses %o before sending', async (bad, field) => {
    const err = (await caught(() =>
      billing().invoices.create({ ...create, ...(bad as object) }),
    )) as InvalidRequestError;
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.issues.map((i) => i.field)).toEqual([field]);
    expect(mock.server.requests.count()).toBe(0);
  });

  it("surfaces the server's field map for an unknown product", async () => {
    const err = (await caught(() =>
      billing().invoices.create({ ...create, product_manage_id: 'prod_nope' }),
    )) as BadRequestError;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(Object.keys(err.fields)).toEqual(['product_manage_id']);
  });
});

describe('invoices.list filters', () => {
  it('filters by status and by e-mail', async () => {
    const open = await billing().invoices.list({ account_ref_id: 'acct_active', status: 'open' }).toArray();
    expect(open.length).toBe(8);
    expect(open.every((i) => i.status === 'open')).toBe(true);
    const byEmail = await billing().invoices.list({ email: 'past-due@example.com' }).toArray();
    expect(byEmail.map((i) => i.account_ref_id)).toEqual(['acct_past_due', 'acct_past_due', 'acct_past_due']);
  });
});
