import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AnyBillingError,
  APIError,
  BadRequestError,
  BillingError,
  ConflictError,
  InternalServerError,
  InvalidRequestError,
  isBillingError,
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

describe('request ids', () => {
  it('every APIError carries requestId, from x-request-id or request-id', async () => {
    mock.server.faults.add({ path: '/api/invoices/', status: 500, headers: { 'x-request-id': 'req_abc' } });
    const first = (await caught(() => list(mock.server))) as APIError;
    expect(first.requestId).toBe('req_abc');
    expect(JSON.parse(JSON.stringify(first)).requestId).toBe('req_abc');
    const unknown = (await caught(() =>
      clientFor(mock.server).transactions.list({ account_ref_id: 'never-seen' }),
    )) as APIError;
    expect(unknown.requestId).toMatch(/\S/);
    expect(unknown.requestId).toBe(mock.server.requests.last()?.requestId);
    const ctx = { operation: 'o', method: 'GET', path: '/' };
    expect(new APIError(502, { 'request-id': 'req_def' }, undefined, ctx).requestId).toBe('req_def');
  });
});

describe('isBillingError and switch (err.name)', () => {
  const samples = async () => {
    mock.server.faults.add({ path: '/api/invoices/', status: 429, headers: { 'retry-after': '120' } });
    const limited = await caught(() => list(mock.server));
    const invalid = await caught(() => clientFor(mock.server).invoices.list({}));
    return { limited, invalid };
  };

  it('recognises every SDK error, by class name and its ancestors', async () => {
    const { limited, invalid } = await samples();
    expect(isBillingError(limited)).toBe(true);
    expect(isBillingError(limited, 'RateLimitError')).toBe(true);
    expect(isBillingError(limited, 'APIError')).toBe(true);
    expect(isBillingError(limited, 'BillingError')).toBe(true);
    expect(isBillingError(limited, 'NotFoundError')).toBe(false);
    expect(isBillingError(invalid, 'InvalidRequestError')).toBe(true);
    expect(isBillingError(new Error('x'))).toBe(false);
    expect(isBillingError({ name: 'RateLimitError' })).toBe(false);
    expect(isBillingError(undefined)).toBe(false);
  });

  it('narrows in TypeScript: the switch reads each class’s own fields', async () => {
    const { limited } = await samples();
    const describe = (err: unknown): string => {
      if (!isBillingError(err)) return 'foreign';
      switch (err.name) {
        case 'RateLimitError':
          expectTypeOf(err).toEqualTypeOf<RateLimitError & { readonly name: 'RateLimitError' }>();
          return `retry in ${err.retryAfterMs}`;
        case 'InvalidRequestError':
          return err.issues.map((i) => i.field).join();
        case 'NotFoundError':
          return err.error ?? '';
        default:
          expectTypeOf(err).toExtend<AnyBillingError>();
          return err.name;
      }
    };
    expect(describe(limited)).toBe('retry in 120000');
    expect(describe(new InvalidRequestError('x', [{ field: 'page', message: 'bad' }]))).toBe('page');
    if (isBillingError(limited, 'APIError')) expectTypeOf(limited.status).toEqualTypeOf<number>();
  });

  it('instanceof also holds for an error made by another copy of the classes (same brand)', async () => {
    // What a second copy of the package (its CJS build beside the ESM one) produces: other classes,
    // same brand field. The built ESM and CJS copies are checked in test/package/dist.test.ts.
    class OtherBillingError extends Error {
      static brand = 'BillingError';
    }
    class OtherAPIError extends OtherBillingError {
      static override brand = 'APIError';
    }
    class OtherRateLimitError extends OtherAPIError {
      static override brand = 'RateLimitError';
    }
    const foreign = new OtherRateLimitError('x');
    expect(foreign).toBeInstanceOf(RateLimitError);
    expect(foreign).toBeInstanceOf(APIError);
    expect(foreign).toBeInstanceOf(BillingError);
    expect(foreign).not.toBeInstanceOf(NotFoundError);
    expect(new Error('x')).not.toBeInstanceOf(BillingError);
    class Mine extends NotFoundError {}
    expect(new Mine(404, {}, undefined, { operation: 'o', method: 'GET', path: '/' })).toBeInstanceOf(
      NotFoundError,
    );
    expect(foreign).not.toBeInstanceOf(Mine);
  });
});
