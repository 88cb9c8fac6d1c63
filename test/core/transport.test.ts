import { describe, expect, it } from 'vitest';
import { AuthenticationError, BillingClient, InvalidRequestError, NotFoundError } from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();

describe('authentication', () => {
  it('sends Authorization: Bearer by default', async () => {
    await clientFor(mock.server).invoices.list({ account_ref_id: 'acct_active' });
    const headers = mock.server.requests.last()?.headers ?? {};
    expect(headers.authorization).toBe(`Bearer ${mock.server.apiKey}`);
    expect(headers['x-api-key']).toBeUndefined();
  });

  it('sends X-API-Key when asked', async () => {
    await clientFor(mock.server, { authHeader: 'x-api-key' }).invoices.list({
      account_ref_id: 'acct_active',
    });
    const headers = mock.server.requests.last()?.headers ?? {};
    expect(headers['x-api-key']).toBe(mock.server.apiKey);
    expect(headers.authorization).toBeUndefined();
  });

  it('turns a 401 into AuthenticationError with the body', async () => {
    const err = await caught(() =>
      clientFor(mock.server, { apiKey: 'wrong' }).invoices.list({ account_ref_id: 'x' }),
    );
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).status).toBe(401);
    expect((err as AuthenticationError).body).toEqual({ detail: 'Invalid API key' });
    expect(mock.server.requests.count()).toBe(1);
  });
});

describe('headers', () => {
  it('sends default headers, lets per-call headers override them, and never the credentials', async () => {
    const billing = clientFor(mock.server, { headers: { 'X-Team': 'core', 'X-Env': 'test' } });
    await billing.invoices.list(
      { account_ref_id: 'acct_active' },
      { headers: { 'x-env': 'override', Authorization: 'Bearer stolen' } },
    );
    const headers = mock.server.requests.last()?.headers ?? {};
    expect(headers['x-team']).toBe('core');
    expect(headers['x-env']).toBe('override');
    expect(headers.authorization).toBe(`Bearer ${mock.server.apiKey}`);
  });
});

describe('URLs', () => {
  it('percent-encodes path segments', async () => {
    const err = await caught(() => clientFor(mock.server).transactions.list({ account_ref_id: 'a/b?c#d é' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(mock.server.requests.last()?.path).toBe('/api/transactions/a%2Fb%3Fc%23d%20%C3%A9/');
  });

  it.each(['.', '..'])('refuses the path segment %s before sending', async (id) => {
    const err = await caught(() => clientFor(mock.server).transactions.list({ account_ref_id: id }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('drops undefined query values', async () => {
    await clientFor(mock.server).invoices.list({
      account_ref_id: 'acct_active',
      email: undefined,
      status: undefined,
    });
    expect(mock.server.requests.last()?.query).toEqual({ account_ref_id: 'acct_active' });
  });

  it('adds the missing trailing slash to the base URL', async () => {
    const billing = clientFor(mock.server, { baseUrl: mock.server.baseUrl.replace(/\/$/, '') });
    const page = await billing.invoices.list({ account_ref_id: 'acct_active' });
    expect(page.results.length).toBeGreaterThan(0);
    expect(mock.server.requests.last()?.path).toBe('/api/invoices/');
  });
});

describe('custom fetch and withOptions', () => {
  it('sends every request through a custom fetch', async () => {
    const seen: string[] = [];
    const billing = clientFor(mock.server, {
      fetch: (input, init) => {
        seen.push(input.url);
        return globalThis.fetch(input, init);
      },
    });
    await billing.invoices.list({ account_ref_id: 'acct_active' });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('/api/invoices/?account_ref_id=acct_active');
  });

  it('withOptions returns a new client that keeps the rest of the options', async () => {
    const billing = clientFor(mock.server, { authHeader: 'x-api-key' });
    const other = billing.withOptions({ headers: { 'x-extra': '1' } });
    expect(other).toBeInstanceOf(BillingClient);
    expect(other).not.toBe(billing);
    await other.invoices.list({ account_ref_id: 'acct_active' });
    const headers = mock.server.requests.last()?.headers ?? {};
    expect(headers['x-api-key']).toBe(mock.server.apiKey);
    expect(headers['x-extra']).toBe('1');
  });
});
