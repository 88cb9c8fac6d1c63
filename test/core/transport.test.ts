import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuthenticationError, BillingClient, InvalidRequestError, NotFoundError } from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { caught, clientFor, startMock } from '../helpers.js';

let server: MockServer;
beforeAll(async () => {
  server = await startMock();
});
afterAll(() => server.close());
beforeEach(() => {
  server.faults.clear();
  server.requests.clear();
});

describe('authentication', () => {
  it('sends Authorization: Bearer by default', async () => {
    await clientFor(server).invoices.list({ account_ref_id: 'acct_active' });
    const headers = server.requests.last()?.headers ?? {};
    expect(headers.authorization).toBe(`Bearer ${server.apiKey}`);
    expect(headers['x-api-key']).toBeUndefined();
  });

  it('sends X-API-Key when asked', async () => {
    await clientFor(server, { authHeader: 'x-api-key' }).invoices.list({ account_ref_id: 'acct_active' });
    const headers = server.requests.last()?.headers ?? {};
    expect(headers['x-api-key']).toBe(server.apiKey);
    expect(headers.authorization).toBeUndefined();
  });

  it('turns a 401 into AuthenticationError with the body', async () => {
    const err = await caught(() =>
      clientFor(server, { apiKey: 'wrong' }).invoices.list({ account_ref_id: 'x' }),
    );
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).status).toBe(401);
    expect((err as AuthenticationError).body).toEqual({ detail: 'Invalid API key' });
    expect(server.requests.count()).toBe(1);
  });
});

describe('headers', () => {
  it('sends default headers, lets per-call headers override them, and never the credentials', async () => {
    const billing = clientFor(server, { headers: { 'X-Team': 'core', 'X-Env': 'test' } });
    await billing.invoices.list(
      { account_ref_id: 'acct_active' },
      { headers: { 'x-env': 'override', Authorization: 'Bearer stolen' } },
    );
    const headers = server.requests.last()?.headers ?? {};
    expect(headers['x-team']).toBe('core');
    expect(headers['x-env']).toBe('override');
    expect(headers.authorization).toBe(`Bearer ${server.apiKey}`);
  });
});

describe('URLs', () => {
  it('percent-encodes path segments', async () => {
    const err = await caught(() => clientFor(server).transactions.list({ account_ref_id: 'a/b?c#d é' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(server.requests.last()?.path).toBe('/api/transactions/a%2Fb%3Fc%23d%20%C3%A9/');
  });

  it.each(['.', '..'])('refuses the path segment %s before sending', async (id) => {
    const err = await caught(() => clientFor(server).transactions.list({ account_ref_id: id }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(server.requests.count()).toBe(0);
  });

  it('drops undefined query values', async () => {
    await clientFor(server).invoices.list({
      account_ref_id: 'acct_active',
      email: undefined,
      status: undefined,
    });
    expect(server.requests.last()?.query).toEqual({ account_ref_id: 'acct_active' });
  });

  it('adds the missing trailing slash to the base URL', async () => {
    const billing = clientFor(server, { baseUrl: server.baseUrl.replace(/\/$/, '') });
    const page = await billing.invoices.list({ account_ref_id: 'acct_active' });
    expect(page.results.length).toBeGreaterThan(0);
    expect(server.requests.last()?.path).toBe('/api/invoices/');
  });
});

describe('custom fetch and withOptions', () => {
  it('sends every request through a custom fetch', async () => {
    const seen: string[] = [];
    const billing = clientFor(server, {
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
    const billing = clientFor(server, { authHeader: 'x-api-key' });
    const other = billing.withOptions({ headers: { 'x-extra': '1' } });
    expect(other).toBeInstanceOf(BillingClient);
    expect(other).not.toBe(billing);
    await other.invoices.list({ account_ref_id: 'acct_active' });
    const headers = server.requests.last()?.headers ?? {};
    expect(headers['x-api-key']).toBe(server.apiKey);
    expect(headers['x-extra']).toBe('1');
  });
});
