import { describe, expect, it } from 'vitest';
import { type BadRequestError, InvalidRequestError, Page, PaginationError } from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();

const pageParams = () => mock.server.requests.all().map((r) => r.query.page ?? '(none)');

describe('pagination', () => {
  it('await gives the first page with its envelope', async () => {
    const page = await clientFor(mock.server).invoices.list({ account_ref_id: 'acct_active' });
    expect(page).toBeInstanceOf(Page);
    expect(page.count).toBe(45);
    expect(page.results).toHaveLength(20);
    expect(page.next).toMatch(/page=2/);
    expect(page.previous).toBeNull();
    expect(page.hasNextPage()).toBe(true);
    const second = await page.getNextPage();
    expect(second.page).toBe(2);
    expect(second.results[0]).not.toEqual(page.results[0]);
  });

  it('for await walks every item of every page with the same parameters', async () => {
    const seen: string[] = [];
    for await (const invoice of clientFor(mock.server).invoices.list({
      account_ref_id: 'acct_active',
      page_size: 20,
    })) {
      seen.push(invoice.processor_invoice_id);
    }
    expect(seen).toHaveLength(45);
    expect(new Set(seen).size).toBe(45);
    expect(pageParams()).toEqual(['(none)', '2', '3']);
    expect(
      mock.server.requests
        .all()
        .every((r) => r.query.page_size === '20' && r.query.account_ref_id === 'acct_active'),
    ).toBe(true);
  });

  it('starts from the requested page', async () => {
    const items = await clientFor(mock.server)
      .invoices.list({ account_ref_id: 'acct_active', page: 2, page_size: 20 })
      .toArray();
    expect(items).toHaveLength(25);
    expect(pageParams()).toEqual(['2', '3']);
  });

  it('.pages() walks pages and .toArray({ limit }) stops early', async () => {
    const billing = clientFor(mock.server);
    const sizes: number[] = [];
    for await (const page of billing.invoices
      .list({ account_ref_id: 'acct_active', page_size: 40 })
      .pages()) {
      sizes.push(page.results.length);
    }
    expect(sizes).toEqual([40, 5]);
    mock.server.requests.clear();
    const some = await billing.invoices
      .list({ account_ref_id: 'acct_active', page_size: 10 })
      .toArray({ limit: 12 });
    expect(some).toHaveLength(12);
    expect(pageParams()).toEqual(['(none)', '2']);
  });

  it('nothing is requested until the list is awaited or iterated', async () => {
    const billing = clientFor(mock.server);
    const pending = billing.invoices.list({ account_ref_id: 'acct_active' });
    // A whole exchange of the same client, started after the list was made: a list that went on its
    // own would have been sent first.
    await billing.products.list();
    expect(mock.server.requests.all().map((r) => r.path)).toEqual(['/api/products/']);
    await pending;
    expect(mock.server.requests.count({ path: '/api/invoices/' })).toBe(1);
  });

  it('never follows next: the next page goes to the configured base URL', async () => {
    for (const page of [1, 2]) {
      mock.server.faults.add({
        path: '/api/transactions/',
        status: 200,
        body: JSON.stringify({
          count: 4,
          next: page === 1 ? 'https://evil.example/steal?page=2' : null,
          previous: null,
          results: [tx(page * 2 - 1), tx(page * 2)],
        }),
      });
    }
    const items = await clientFor(mock.server)
      .transactions.list({ account_ref_id: 'acct_active', page_size: 2 })
      .toArray({ limit: 4 });
    expect(items).toHaveLength(4);
    expect(mock.server.requests.all().map((r) => r.path)).toEqual([
      '/api/transactions/acct_active/',
      '/api/transactions/acct_active/',
    ]);
    expect(pageParams()).toEqual(['(none)', '2']);
  });

  it('ends an envelope without next on count', async () => {
    mock.server.faults.add({
      path: '/api/transactions/',
      status: 200,
      body: JSON.stringify({ count: 3, results: [tx(1), tx(2)] }),
    });
    mock.server.faults.add({
      path: '/api/transactions/',
      status: 200,
      body: JSON.stringify({ count: 3, results: [tx(3)] }),
    });
    const items = await clientFor(mock.server)
      .transactions.list({ account_ref_id: 'acct_active', page_size: 2 })
      .toArray();
    expect(items.map((t) => t.transaction_uuid)).toEqual(['t1', 't2', 't3']);
    expect(mock.server.requests.count()).toBe(2);
  });

  it('an empty page while next says more is a PaginationError saying how many of how many, not a short list', async () => {
    mock.server.faults.add({
      path: '/api/transactions/',
      status: 200,
      body: JSON.stringify({ count: 99, next: 'x', previous: null, results: [tx(1)] }),
    });
    mock.server.faults.add({
      path: '/api/transactions/',
      status: 200,
      body: JSON.stringify({ count: 99, next: 'x', previous: null, results: [] }),
    });
    const err = await caught(() =>
      clientFor(mock.server).transactions.list({ account_ref_id: 'acct_active', page_size: 1 }).toArray(),
    );
    expect(err).toBeInstanceOf(PaginationError);
    expect(err.message).toContain('after 1 of 99 items');
    expect(mock.server.requests.count()).toBe(2);
  });

  it('next: null before count items were seen is a PaginationError, for await and toArray alike', async () => {
    const short = JSON.stringify({ count: 5, next: null, previous: null, results: [tx(1), tx(2)] });
    mock.server.faults.add({ path: '/api/transactions/', status: 200, body: short, times: 2 });
    const list = () =>
      clientFor(mock.server).transactions.list({ account_ref_id: 'acct_active', page_size: 2 });
    const err = await caught(() => list().toArray());
    expect(err).toBeInstanceOf(PaginationError);
    expect(err.message).toContain('after 2 of 5 items');
    const seen: unknown[] = [];
    const walked = await caught(async () => {
      for await (const item of list()) seen.push(item);
    });
    expect(walked).toBeInstanceOf(PaginationError);
    expect(seen).toHaveLength(2);
    // Stopping early on purpose is no error.
    mock.server.faults.add({ path: '/api/transactions/', status: 200, body: short });
    expect(await list().toArray({ limit: 1 })).toHaveLength(1);
  });

  it('detects a mock.server that repeats a page instead of looping', async () => {
    const same = JSON.stringify({ count: 1000, next: 'more', previous: null, results: [tx(1), tx(2)] });
    mock.server.faults.add({
      path: '/api/transactions/',
      status: 200,
      body: same,
      times: Number.POSITIVE_INFINITY,
    });
    const err = await caught(() =>
      clientFor(mock.server).transactions.list({ account_ref_id: 'acct_active', page_size: 2 }).toArray(),
    );
    expect(err).toBeInstanceOf(PaginationError);
    expect(err.message).toContain('page 2 repeated page 1');
    expect(mock.server.requests.count()).toBe(2);
  });

  it('getNextPage on the last page throws PaginationError', async () => {
    const page = await clientFor(mock.server).invoices.list({ account_ref_id: 'acct_active', page: 3 });
    expect(page.hasNextPage()).toBe(false);
    expect(await caught(() => page.getNextPage())).toBeInstanceOf(PaginationError);
  });

  it.each([
    [{ page: 0 }, 'page'],
    [{ page: 1.5 }, 'page'],
    [{ page_size: 0 }, 'page_size'],
    [{ page_size: 101 }, 'page_size'],
    [{ status: 'refunded' }, 'status'],
  ])('refuses %o before sending', async (bad, field) => {
    const err = (await caught(() =>
      clientFor(mock.server).invoices.list({ account_ref_id: 'acct_active', ...(bad as object) }),
    )) as InvalidRequestError;
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.issues.map((i) => i.field)).toEqual([field]);
    expect(err.message).toMatch(/^invoices\.list: /);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('invoices need account_ref_id or email', async () => {
    const err = (await caught(() => clientFor(mock.server).invoices.list({}))) as InvalidRequestError;
    expect(err.issues).toEqual([{ field: 'account_ref_id', message: 'or email is required' }]);
    expect(mock.server.requests.count()).toBe(0);
    const byEmail = await clientFor(mock.server).invoices.list({ email: 'nobody@example.com' });
    expect(byEmail.count).toBe(0);
  });

  it("the mock's own 400 for a bad page reaches callers as BadRequestError.fields", async () => {
    const res = await fetch(`${mock.server.baseUrl}invoices/?account_ref_id=acct_active&page_size=500`, {
      headers: { authorization: `Bearer ${mock.server.apiKey}` },
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    mock.server.faults.add({ path: '/api/invoices/', status: 400, body: JSON.stringify(body) });
    const err = (await caught(() =>
      clientFor(mock.server).invoices.list({ account_ref_id: 'acct_active' }),
    )) as BadRequestError;
    expect(Object.keys(err.fields)).toEqual(['page_size']);
  });
});

function tx(i: number) {
  return {
    transaction_uuid: `t${i}`,
    account_ref_id: 'acct_active',
    status: 'completed',
    amount: '1.00',
    currency: 'usd',
    customer_email: 'a@example.com',
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
  };
}
