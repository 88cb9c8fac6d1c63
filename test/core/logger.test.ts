import { afterEach, describe, expect, it, vi } from 'vitest';
import { BillingClient, type Logger } from '../../src/index.js';
import { clientFor, memoryLogger, useMockServer } from '../helpers.js';

const mock = useMockServer();

const throwing: Logger = {
  error: () => {
    throw new Error('log sink down');
  },
  warn: () => {
    throw new Error('log sink down');
  },
  info: () => {
    throw new Error('log sink down');
  },
  debug: () => {
    throw new Error('log sink down');
  },
};

describe('logging never changes a result', () => {
  it('a throwing logger at debug level: the committed debit still resolves, once', async () => {
    mock.server.faults.add({
      path: '/api/usage/credits/debit/',
      status: 503,
      headers: { 'retry-after': '0' },
    });
    const billing = clientFor(mock.server, { logger: throwing, logLevel: 'debug' });
    const debit = await billing.usage.debit({
      account_ref_id: 'acct_active',
      product_code: 'ai-assistant',
      meter_code: 'credits',
      quantity: 3,
    });
    expect(debit).toMatchObject({ approved: true, debited: 3, remaining_balance: 997 });
    expect(mock.server.requests.count()).toBe(2);
  });

  it('a throwing logger on a warn-mode validation failure: the raw body is still returned', async () => {
    mock.server.faults.add({ path: '/api/usage/credits/balance/', status: 200, body: '{"balance":"lots"}' });
    const billing = clientFor(mock.server, { logger: throwing, validation: 'warn' });
    const result = await billing.usage.balance({
      account_ref_id: 'acct_active',
      product_code: 'ai-assistant',
      meter_code: 'credits',
    });
    expect(result).toEqual({ balance: 'lots' });
  });
});

describe('debug lines', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('one per attempt, with status, time, attempt number and request id', async () => {
    const logger = memoryLogger();
    mock.server.faults.add({ path: '/api/invoices/', status: 503, headers: { 'retry-after': '0' } });
    await clientFor(mock.server, { logger, logLevel: 'debug' }).invoices.list({
      account_ref_id: 'acct_active',
    });
    const [first, second] = mock.server.requests.all().map((r) => r.requestId);
    const attempts = logger.lines.filter((l) => l.startsWith('debug [billing-sdk] GET /api/invoices/ → '));
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatch(new RegExp(`→ 503 in \\d+ ms \\(attempt 1 of 3, request ${first}\\)`));
    expect(attempts[1]).toMatch(new RegExp(`→ 200 in \\d+ ms \\(attempt 2 of 3, request ${second}\\)`));
  });

  it('an invalid BILLING_LOG warns instead of being ignored', () => {
    vi.stubEnv('BILLING_LOG', 'verbose');
    const logger = memoryLogger();
    new BillingClient({ apiKey: 'k', baseUrl: mock.server.baseUrl, logger });
    expect(logger.lines).toEqual([
      "warn [billing-sdk] BILLING_LOG=verbose is not a level (off, error, warn, info, debug); using 'warn'. ",
    ]);
  });
});
