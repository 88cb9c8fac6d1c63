import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client, obj, results } from './helpers.js';

const active = DEMO.accounts.active;

describe('mock server: pagination and transactions', () => {
  const mock = useMockServer();
  const api = client(mock);

  it('defaults to page 1 of 20 with an absolute next link and no previous', async () => {
    const r = await api.get(`transactions/${active}/`);
    expect(r.status).toBe(200);
    const body = obj(r.body);
    expect(body.count).toBe(30);
    expect(results(body)).toHaveLength(20);
    expect(body.previous).toBeNull();
    expect(body.next).toBe(`${mock.server.baseUrl}transactions/${active}/?page=2`);
  });

  it('keeps the other query parameters in next/previous and moves only the page', async () => {
    const r = await api.get(`invoices/?account_ref_id=${active}&page_size=10&page=2&status=paid`);
    const body = obj(r.body);
    expect(body.count).toBe(25);
    expect(results(body)).toHaveLength(10);
    const next = new URL(String(body.next));
    expect(next.origin + next.pathname).toBe(`${mock.server.baseUrl}invoices/`);
    expect(Object.fromEntries(next.searchParams)).toEqual({
      account_ref_id: active,
      page_size: '10',
      page: '3',
      status: 'paid',
    });
    const previous = new URL(String(body.previous));
    expect(previous.searchParams.get('page')).toBeNull();
    expect(previous.searchParams.get('page_size')).toBe('10');
  });

  it('walks all 45 invoices of acct_active in three pages without repeats', async () => {
    const seen: string[] = [];
    let path: string | null = `invoices/?account_ref_id=${active}&page_size=20`;
    let pages = 0;
    while (path) {
      const body = obj((await api.get(path)).body);
      for (const item of results(body)) seen.push(String(item.processor_invoice_id));
      path = typeof body.next === 'string' ? body.next : null;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(45);
    expect(new Set(seen).size).toBe(45);
  });

  it('answers a page past the end with empty results and no next', async () => {
    const body = obj((await api.get(`transactions/${active}/?page=9`)).body);
    expect(body.count).toBe(30);
    expect(body.results).toEqual([]);
    expect(body.next).toBeNull();
    expect(body.previous).toBe(`${mock.server.baseUrl}transactions/${active}/?page=8`);
  });

  it('allows page_size 100 and the last partial page', async () => {
    expect(results((await api.get(`transactions/${active}/?page_size=100`)).body)).toHaveLength(30);
    const body = obj((await api.get(`transactions/${active}/?page=2&page_size=20`)).body);
    expect(results(body)).toHaveLength(10);
    expect(body.next).toBeNull();
  });

  it.each([
    ['page=0', { page: ['Ensure this value is greater than or equal to 1.'] }],
    ['page=-1', { page: ['Ensure this value is greater than or equal to 1.'] }],
    ['page=abc', { page: ['A valid integer is required.'] }],
    ['page=1.5', { page: ['A valid integer is required.'] }],
    ['page_size=0', { page_size: ['Ensure this value is greater than or equal to 1.'] }],
    ['page_size=101', { page_size: ['Ensure this value is less than or equal to 100.'] }],
    ['page_size=x', { page_size: ['A valid integer is required.'] }],
    [
      'page=x&page_size=500',
      {
        page: ['A valid integer is required.'],
        page_size: ['Ensure this value is less than or equal to 100.'],
      },
    ],
  ])('answers 400 with a field map for %s', async (query, expected) => {
    for (const path of [
      `transactions/${active}/?${query}`,
      `invoices/?account_ref_id=${active}&${query}`,
      `tiers/?${query}`,
    ]) {
      const r = await api.get(path);
      expect(r.status, path).toBe(400);
      expect(r.body, path).toEqual(expected);
    }
  });

  it('lists transactions with every documented field, newest first', async () => {
    const list = results((await api.get(`transactions/${active}/?page_size=100`)).body);
    expect(Object.keys(list[0] ?? {}).sort()).toEqual(
      [
        'account_ref_id',
        'amount',
        'created_at',
        'currency',
        'customer_email',
        'status',
        'transaction_uuid',
        'updated_at',
      ].sort(),
    );
    const first = list[0] ?? {};
    expect(first.account_ref_id).toBe(active);
    expect(first.customer_email).toBe(DEMO.emails.active);
    expect(first.transaction_uuid).toMatch(/^00000000-0000-4000-8000-[0-9a-f]{12}$/);
    const dates = list.map((t) => String(t.created_at));
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(new Set(list.map((t) => t.status))).toEqual(
      new Set(['pending', 'completed', 'failed', 'cancelled']),
    );
  });

  it('filters transactions by status', async () => {
    for (const [status, count] of Object.entries(DEMO.counts.acct_active.transactions)) {
      const body = obj((await api.get(`transactions/${active}/?status=${status}`)).body);
      expect(body.count, status).toBe(count);
      expect(results(body).every((t) => t.status === status)).toBe(true);
    }
  });

  it('rejects an unknown transaction status with a field map', async () => {
    const r = await api.get(`transactions/${active}/?status=done`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ status: ['"done" is not a valid choice.'] });
  });

  it('answers 404 for an account it has never seen, and an empty list for acct_empty', async () => {
    const r = await api.get('transactions/acct_nobody/');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Account not found or invalid subscription tier' });
    const empty = obj((await api.get(`transactions/${DEMO.accounts.empty}/`)).body);
    expect(empty).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('decodes percent-encoded path segments (spaces, slashes, percent, unicode)', async () => {
    for (const id of ['team a/b', 'org%20literal', 'ünïcødé 🚀', 'a?b#c']) {
      mock.server.store.addAccount({ account_ref_id: id, customer_email: 'x@example.com' });
      mock.server.store.addTransaction({ account_ref_id: id, status: 'completed', amount: '1.00' });
      const r = await api.get(`transactions/${encodeURIComponent(id)}/`);
      expect(r.status, id).toBe(200);
      const list = results(r.body);
      expect(list).toHaveLength(1);
      expect(list[0]?.account_ref_id).toBe(id);
      const status = await api.get(`account/${encodeURIComponent(id)}/status/`);
      expect(status.status, id).toBe(404);
    }
    // The encoded form of a slash is not confused with a real path separator.
    expect((await api.get('transactions/team a/b/')).status).toBe(404);
  });
});
