import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  InternalServerError,
  InvalidRequestError,
  isBillingError,
} from '../../src/index.js';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();
const billing = () => clientFor(mock.server);
const credits = { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' };
const calls = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
const balance = async () => (await billing().usage.balance(credits)).balance;
const sentKeys = (path: string) =>
  mock.server.requests.all({ path }).map((r) => (r.body as { event_key: string }).event_key);

describe('usage.balance', () => {
  it('returns the balance, 0 when there is no record', async () => {
    expect(await balance()).toBe(1000);
    expect((await billing().usage.balance({ ...credits, account_ref_id: 'acct_empty' })).balance).toBe(0);
  });
});

describe('usage.debit', () => {
  it('debits, generating an event_key and returning it', async () => {
    const debit = await billing().usage.debit({ ...credits, quantity: 5, metadata: { job: 'j1' } });
    expect(debit).toMatchObject({ approved: true, debited: 5, remaining_balance: 995 });
    expect(debit.event_key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sentKeys('/api/usage/credits/debit/')).toEqual([debit.event_key]);
    expect(mock.server.requests.last()?.body).toMatchObject({ metadata: { job: 'j1' }, quantity: 5 });
  });

  it('keeps a caller-given event_key', async () => {
    const debit = await billing().usage.debit({ ...credits, quantity: 1, event_key: 'job-42' });
    expect(debit.event_key).toBe('job-42');
  });

  it('a replay with the same key returns the original result and debits once', async () => {
    const first = await billing().usage.debit({ ...credits, quantity: 7, event_key: 'k-replay' });
    const again = await billing().usage.debit({ ...credits, quantity: 7, event_key: 'k-replay' });
    expect(again).toEqual(first);
    expect(await balance()).toBe(993);
  });

  it('insufficient credits is a result (402 on the wire), and the balance stays', async () => {
    const debit = await billing().usage.debit({ ...credits, quantity: 5000 });
    expect(debit).toMatchObject({
      approved: false,
      error_code: 'insufficient_credits',
      remaining_balance: 1000,
    });
    expect(await balance()).toBe(1000);
    expect(mock.server.requests.count({ path: '/api/usage/credits/debit/' })).toBe(1);
  });

  it('a product with another usage model is a result too (422 on the wire)', async () => {
    const debit = await billing().usage.debit({ ...calls, quantity: 1 });
    expect(debit).toMatchObject({ approved: false, error_code: 'invalid_usage_model' });
  });

  it('retries a 503 with the same event_key', async () => {
    mock.server.faults.add({
      path: '/api/usage/credits/debit/',
      status: 503,
      headers: { 'retry-after': '0' },
    });
    const debit = await billing().usage.debit({ ...credits, quantity: 3 });
    expect(debit.approved).toBe(true);
    expect(sentKeys('/api/usage/credits/debit/')).toEqual([debit.event_key, debit.event_key]);
  });

  it('a response lost after the server committed the debit: the retry moves the balance exactly once', async () => {
    mock.server.faults.add({ path: '/api/usage/credits/debit/', reset: 'after' });
    const debit = await billing().usage.debit({ ...credits, quantity: 10 });
    expect(debit).toMatchObject({ approved: true, debited: 10, remaining_balance: 990 });
    expect(mock.server.requests.count({ path: '/api/usage/credits/debit/' })).toBe(2);
    expect(new Set(sentKeys('/api/usage/credits/debit/')).size).toBe(1);
    expect(await balance()).toBe(990);
  });

  it.each([
    [{ quantity: 0 }, 'quantity'],
    [{ quantity: 1.5 }, 'quantity'],
    [{ quantity: undefined }, 'quantity'],
    [{ event_key: '' }, 'event_key'],
    [{ metadata: [1] }, 'metadata'],
    [{ meter_code: undefined }, 'meter_code'],
  ])('refuses %o before sending', async (bad, field) => {
    const err = (await caught(() =>
      billing().usage.debit({ ...credits, quantity: 1, ...(bad as object) }),
    )) as InvalidRequestError;
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.issues.map((i) => i.field)).toEqual([field]);
    expect(mock.server.requests.count()).toBe(0);
  });
});

describe('usage.record', () => {
  const summary = async () => (await billing().usage.summary(calls)).total_usage;

  it('records once; a replay answers idempotent and records nothing', async () => {
    const before = await summary();
    const first = await billing().usage.record({ ...calls, quantity: 3 });
    expect(first).toMatchObject({ accepted: true, recorded_quantity: 3, idempotent: false });
    const replay = await billing().usage.record({ ...calls, quantity: 3, event_key: first.event_key });
    expect(replay).toMatchObject({
      accepted: true,
      recorded_quantity: 3,
      idempotent: true,
      event_key: first.event_key,
    });
    expect(await summary()).toBe(before + 3);
  });

  it('a response lost after commit is retried with the same key and recorded once', async () => {
    const before = await summary();
    mock.server.faults.add({ path: '/api/usage/events/', reset: 'after' });
    const event = await billing().usage.record({ ...calls, quantity: 4 });
    expect(event).toMatchObject({ accepted: true, idempotent: true });
    expect(new Set(sentKeys('/api/usage/events/')).size).toBe(1);
    expect(await summary()).toBe(before + 4);
  });

  it('a prepaid product is refused as a result', async () => {
    const event = await billing().usage.record({ ...credits, quantity: 1 });
    expect(event).toMatchObject({ accepted: false, error_code: 'invalid_usage_model' });
  });
});

describe('usage.summary', () => {
  it('sums the whole history, and inclusive ranges given as Date or ISO string', async () => {
    expect((await billing().usage.summary(calls)).total_usage).toBe(2000);
    const jan = await billing().usage.summary({
      ...calls,
      start: new Date('2026-01-01T00:00:00Z'),
      end: '2026-01-31T23:59:59Z',
    });
    expect(jan.total_usage).toBe(350);
    expect(mock.server.requests.last()?.query.start).toBe('2026-01-01T00:00:00.000Z');
    const feb = await billing().usage.summary({
      ...calls,
      start: '2026-02-01T00:00:00Z',
      end: '2026-02-28T23:59:59Z',
    });
    expect(feb.total_usage).toBe(650);
  });

  it('refuses an unparsable date before sending', async () => {
    const err = (await caught(() =>
      billing().usage.summary({ ...calls, start: 'last tuesday' }),
    )) as InvalidRequestError;
    expect(err.issues.map((i) => i.field)).toEqual(['start']);
    expect(mock.server.requests.count()).toBe(0);
  });
});

describe('refusals carried by a 200', () => {
  let server: MockServer;
  beforeAll(async () => {
    server = await startMockServer({ refusalStatus: { insufficientCredits: 200, invalidUsageModel: 200 } });
  });
  afterAll(() => server.close());

  it('are the same results', async () => {
    const client = clientFor(server);
    expect(await client.usage.debit({ ...credits, quantity: 99_999 })).toMatchObject({
      approved: false,
      error_code: 'insufficient_credits',
    });
    expect(await client.usage.record({ ...credits, quantity: 1 })).toMatchObject({
      accepted: false,
      error_code: 'invalid_usage_model',
    });
  });
});

describe('a debit or usage event that fails for good carries its event_key', () => {
  it('on a 5xx after every retry: resubmitting with the key applies it once', async () => {
    mock.server.faults.add({ path: '/api/usage/credits/debit/', status: 503, times: 3 });
    const before = await balance();
    const err = await caught(() => billing().usage.debit({ ...credits, quantity: 4 }));
    expect(err).toBeInstanceOf(InternalServerError);
    const key = isBillingError(err) ? err.event_key : undefined;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(sentKeys('/api/usage/credits/debit/'))).toEqual(new Set([key]));
    // The documented pattern: retry later with the same key.
    const later = await billing().usage.debit({ ...credits, quantity: 4, event_key: key });
    expect(later.approved).toBe(true);
    const replay = await billing().usage.debit({ ...credits, quantity: 4, event_key: key });
    expect(replay).toMatchObject({ approved: true, event_key: key });
    expect(await balance()).toBe(before - 4);
  });

  it('on a connection failure after a commit whose answer was lost every time', async () => {
    mock.server.faults.add({ path: '/api/usage/events/', reset: 'after', times: 3 });
    const err = await caught(() => billing().usage.record({ ...calls, quantity: 2, event_key: 'evt-lost' }));
    expect(err).toBeInstanceOf(APIConnectionError);
    expect((err as APIConnectionError).event_key).toBe('evt-lost');
    expect(JSON.parse(JSON.stringify(err)).event_key).toBe('evt-lost');
    const again = await billing().usage.record({ ...calls, quantity: 2, event_key: 'evt-lost' });
    expect(again).toMatchObject({ accepted: true, idempotent: true, recorded_quantity: 2 });
  });
});
