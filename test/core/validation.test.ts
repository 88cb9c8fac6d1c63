import { describe, expect, it } from 'vitest';
import { APIConnectionError, ResponseValidationError } from '../../src/index.js';
import { caught, clientFor, memoryLogger, useMockServer } from '../helpers.js';

const mock = useMockServer();

const tx = {
  transaction_uuid: 't1',
  account_ref_id: 'acct_active',
  status: 'completed',
  amount: '1.00',
  currency: 'usd',
  customer_email: 'not-an-email',
  created_at: 'not a date either',
  updated_at: '2026-01-01T00:00:00Z',
};
const serve = (results: unknown[]) =>
  mock.server.faults.add({
    path: '/api/transactions/',
    status: 200,
    body: JSON.stringify({ count: results.length, next: null, previous: null, results }),
  });
const list = (options = {}) =>
  clientFor(mock.server, options).transactions.list({ account_ref_id: 'acct_active' });

describe('response validation', () => {
  it('keeps unknown fields and unknown enum values, and checks no formats', async () => {
    serve([{ ...tx, status: 'refunded', refund_reason: 'duplicate' }]);
    const page = await list();
    expect(page.results[0]).toMatchObject({
      status: 'refunded',
      refund_reason: 'duplicate',
      customer_email: 'not-an-email',
    });
  });

  it('strict (default): a missing or mistyped field throws ResponseValidationError with issues and body', async () => {
    const { currency: _, ...missing } = tx;
    const bad = [missing, { ...tx, amount: 19 }];
    serve(bad);
    const err = (await caught(() => list())) as ResponseValidationError;
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err.issues.map((i) => i.path)).toEqual([
      ['results', 0, 'currency'],
      ['results', 1, 'amount'],
    ]);
    expect(err.issues[1]?.message).toBe('expected string');
    expect(err.body).toMatchObject({ results: bad });
    expect(err.message).toContain(
      'transactions.list (GET /api/transactions/acct_active/) returned an unexpected body',
    );
  });

  it('warn: logs the mismatch and returns the data as received', async () => {
    const logger = memoryLogger();
    serve([{ ...tx, amount: 19 }]);
    const page = await list({ validation: 'warn', logger, logLevel: 'warn' });
    expect(page.results[0]?.amount).toBe(19);
    expect(
      logger.lines.some((l) => l.startsWith('warn [billing-sdk]') && l.includes('results.0.amount')),
    ).toBe(true);
  });

  it('off: returns the data without checking', async () => {
    serve([{ nothing: 'like a transaction' }]);
    const page = await list({ validation: 'off' });
    expect(page.results[0]).toEqual({ nothing: 'like a transaction' });
  });

  it('a 2xx body that is not JSON fails validation with the text kept', async () => {
    mock.server.faults.add({ path: '/api/transactions/', status: 200, body: 'OK' });
    const err = (await caught(() => list())) as ResponseValidationError;
    expect(err).toBeInstanceOf(ResponseValidationError);
    expect(err.body).toBe('OK');
  });

  it.each(['warn', 'off'] as const)(
    '%s: a malformed 2xx is a ResponseValidationError, never a connection error, never retried',
    async (validation) => {
      mock.server.faults.add({ path: '/api/resolve/public-url/', status: 200, body: '42' });
      const billing = clientFor(mock.server, { validation, maxRetries: 3 });
      const err = await caught(() =>
        billing.resolve.publicUrl({ account_ref_id: 'acct_active', product_name: 'ebook' }),
      );
      expect(err).toBeInstanceOf(ResponseValidationError);
      expect(err).not.toBeInstanceOf(APIConnectionError);
      expect((err as ResponseValidationError).body).toBe(42);
      expect(mock.server.requests.count()).toBe(1);
    },
  );

  it.each(['warn', 'off'] as const)(
    '%s: a list answer with results: null is a ResponseValidationError, not a bare TypeError',
    async (validation) => {
      mock.server.faults.add({
        path: '/api/transactions/',
        status: 200,
        body: JSON.stringify({ count: 3, next: null, previous: null, results: null }),
        times: 2,
      });
      const billing = clientFor(mock.server, { validation, logLevel: 'off' });
      const first = await caught(() => billing.transactions.list({ account_ref_id: 'acct_active' }));
      expect(first).toBeInstanceOf(ResponseValidationError);
      expect((first as ResponseValidationError).issues[0]?.path).toEqual(['results']);
      const walked = await caught(() =>
        billing.transactions.list({ account_ref_id: 'acct_active' }).toArray(),
      );
      expect(walked).toBeInstanceOf(ResponseValidationError);
      expect(mock.server.requests.count()).toBe(2);
    },
  );
});
