import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client } from './helpers.js';

describe('mock server: request log', () => {
  const mock = useMockServer();
  const api = client(mock);

  it('starts empty and records nothing for hosted pages', async () => {
    expect(mock.server.requests.count()).toBe(0);
    expect(mock.server.requests.last()).toBeUndefined();
    await fetch(`${mock.server.appUrl}/p/pu_ebook`);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('records method, raw path, decoded query, lowercased headers and the JSON body', async () => {
    await api.get(`transactions/${encodeURIComponent('a/b c')}/?status=paid&page=2`, { 'X-Trace': 'abc' });
    await api.post('usage/events/', { event_key: 'k1', quantity: 1 });
    expect(mock.server.requests.count()).toBe(2);
    const [get, post] = mock.server.requests.all();
    expect(get).toMatchObject({
      method: 'GET',
      path: '/api/transactions/a%2Fb%20c/',
      query: { status: 'paid', page: '2' },
      body: undefined,
      rawBody: '',
    });
    expect(get?.headers['x-trace']).toBe('abc');
    expect(get?.headers.authorization).toBe(`Bearer ${mock.server.apiKey}`);
    expect(post).toMatchObject({
      method: 'POST',
      path: '/api/usage/events/',
      body: { event_key: 'k1', quantity: 1 },
    });
    expect(mock.server.requests.last()).toBe(post);
  });

  it('records rejected requests too, so tests can see which auth header was used', async () => {
    await api.get('products/', { authorization: '', 'x-api-key': 'wrong' });
    const last = mock.server.requests.last();
    expect(last?.headers['x-api-key']).toBe('wrong');
    expect(last?.headers.authorization).toBe('');
  });

  it('filters by method, path prefix, RegExp or predicate', async () => {
    const base = {
      account_ref_id: DEMO.accounts.active,
      product_code: 'ai-assistant',
      meter_code: 'credits',
    };
    await api.post('usage/credits/debit/', { ...base, quantity: 1, event_key: 'same' });
    await api.post('usage/credits/debit/', { ...base, quantity: 1, event_key: 'same' });
    await api.get('products/');
    expect(mock.server.requests.count({ method: 'post' })).toBe(2);
    expect(mock.server.requests.count({ path: '/api/usage/' })).toBe(2);
    expect(mock.server.requests.count({ path: /products\/$/g })).toBe(1);
    expect(mock.server.requests.count({ path: /products\/$/g })).toBe(1);
    const keys = mock.server.requests
      .all({ path: '/api/usage/credits/debit/' })
      .map((r) => (r.body as { event_key?: string }).event_key);
    expect(keys).toEqual(['same', 'same']);
    expect(mock.server.requests.count((r) => r.method === 'GET')).toBe(1);
    expect(mock.server.requests.last({ method: 'POST' })?.path).toBe('/api/usage/credits/debit/');
  });

  it('keeps the raw text of a body that is not JSON', async () => {
    await api.post('invoices/create/', 'amount=1');
    expect(mock.server.requests.last()).toMatchObject({ body: undefined, rawBody: 'amount=1' });
  });

  it('clear() forgets everything', async () => {
    await api.get('products/');
    mock.server.requests.clear();
    expect(mock.server.requests.all()).toEqual([]);
  });
});
