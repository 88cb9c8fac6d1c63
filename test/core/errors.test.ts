import { describe, expect, it } from 'vitest';
import {
  APIError,
  BadRequestError,
  BillingError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
} from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();

const list = (s: MockServer) =>
  clientFor(s, { maxRetries: 0 }).invoices.list({ account_ref_id: 'acct_active' });

describe('status → error class', () => {
  it.each([
    [400, BadRequestError, 'BadRequestError'],
    [403, PermissionDeniedError, 'PermissionDeniedError'],
    [404, NotFoundError, 'NotFoundError'],
    [409, ConflictError, 'ConflictError'],
    [422, UnprocessableEntityError, 'UnprocessableEntityError'],
    [429, RateLimitError, 'RateLimitError'],
    [500, InternalServerError, 'InternalServerError'],
    [503, InternalServerError, 'InternalServerError'],
    [418, APIError, 'APIError'],
  ])('%i → %o', async (status, ErrorClass, name) => {
    mock.server.faults.add({ path: '/api/invoices/', status, body: '{"detail":"nope"}' });
    const err = await caught(() => list(mock.server));
    expect(err).toBeInstanceOf(ErrorClass);
    expect(err).toBeInstanceOf(BillingError);
    expect(err.name).toBe(name);
    expect((err as APIError).status).toBe(status);
    expect((err as APIError).body).toEqual({ detail: 'nope' });
  });

  it('names the method and the path in the message, never the query', async () => {
    mock.server.faults.add({ path: '/api/invoices/', status: 500, body: '{"detail":"boom"}' });
    const err = await caught(() =>
      clientFor(mock.server, { maxRetries: 0 }).invoices.list({ email: 'someone@example.com' }),
    );
    expect(err.message).toBe('invoices.list (GET /api/invoices/) failed with 500: boom');
    expect(err.message).not.toContain('someone@example.com');
  });

  it('BadRequestError.fields holds the field map', async () => {
    mock.server.faults.add({
      path: '/api/invoices/',
      status: 400,
      body: '{"page_size":["Ensure this value is less than or equal to 100."]}',
    });
    const err = (await caught(() => list(mock.server))) as BadRequestError;
    expect(err.fields).toEqual({ page_size: ['Ensure this value is less than or equal to 100.'] });
    expect(err.message).toContain('page_size: Ensure this value');
  });

  it('NotFoundError.error holds the mock.server message', async () => {
    const err = (await caught(() =>
      clientFor(mock.server).transactions.list({ account_ref_id: 'nobody' }),
    )) as NotFoundError;
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.error).toBe('Account not found or invalid subscription tier');
  });

  it('keeps a body that is not JSON as text', async () => {
    mock.server.faults.add({ path: '/api/invoices/', status: 502, body: '<html>Bad gateway</html>' });
    const err = (await caught(() => list(mock.server))) as APIError;
    expect(err).toBeInstanceOf(InternalServerError);
    expect(err.body).toBe('<html>Bad gateway</html>');
  });

  it('keeps response headers, lower-cased', async () => {
    mock.server.faults.add({
      path: '/api/invoices/',
      status: 429,
      headers: { 'Retry-After': '120', 'X-Request-Id': 'r1' },
    });
    const err = (await caught(() => list(mock.server))) as RateLimitError;
    expect(err.headers['x-request-id']).toBe('r1');
    expect(err.retryAfterMs).toBe(120_000);
  });
});
