// The mock keeps the reference's time rules: a day that does not exist is invalid input (400 with
// the field map), usage events are stamped to the millisecond so inclusive bounds are exact, and a
// malformed Host header is the client's error (400), not the server's.
import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client, obj } from './helpers.js';
import { rawRequest } from './raw-http.js';

const A = DEMO.accounts.active;
const GW = DEMO.products.apiGateway.product_code;
const mock = useMockServer();
const api = client(mock);
const summary = (query: string) =>
  api.get(`usage/summary/?account_ref_id=${A}&product_code=${GW}&meter_code=api_calls${query}`);

describe('mock: a day that does not exist', () => {
  it.each([
    '2026-02-30T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '2026-02-29',
    '2026-13-01',
  ])('end=%s: 400 naming end', async (day) => {
    const r = await summary(`&end=${day}`);
    expect(r.status).toBe(400);
    expect(Object.keys(obj(r.body))).toEqual(['end']);
    const s = await summary(`&start=${day}`);
    expect(s.status).toBe(400);
    expect(Object.keys(obj(s.body))).toEqual(['start']);
  });

  it('a real leap day (2028-02-29) and the last day of a month answer 200', async () => {
    expect((await summary('&end=2028-02-29T00:00:00Z')).status).toBe(200);
    expect((await summary('&end=2026-04-30T23:59:59Z')).status).toBe(200);
  });
});

describe('mock: inclusive bounds are exact', () => {
  it('an event is stamped with its milliseconds; start and end at it count it, 1 ms off does not', async () => {
    const before = Date.now();
    const r = await api.post('usage/events/', {
      account_ref_id: A,
      product_code: GW,
      meter_code: 'api_calls',
      quantity: 5,
      event_key: 'ms-1',
    });
    const after = Date.now();
    expect(r.status).toBe(200);
    const stamped = mock.server.store.usageEvents.find((e) => e.event_key === 'ms-1')?.timestamp as string;
    expect(stamped).toMatch(/\.\d{3}Z$/);
    const at = Date.parse(stamped);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    const total = async (query: string) => obj((await summary(query)).body).total_usage;
    expect(await total(`&start=${iso(at)}&end=${iso(at)}`)).toBe(5);
    expect(await total(`&start=${iso(at + 1)}&end=${iso(at + 1000)}`)).toBe(0);
    expect(await total(`&start=${iso(at - 1000)}&end=${iso(at - 1)}`)).toBe(0);
  });
});

describe('mock: a malformed Host header', () => {
  it('is a 400, not a 500', async () => {
    const outcome = await rawRequest(`${mock.server.baseUrl}/api/products/`, { headers: { host: 'a b' } });
    expect(outcome.kind).toBe('answer');
    expect(outcome.kind === 'answer' && outcome.status).toBe(400);
  });
});
