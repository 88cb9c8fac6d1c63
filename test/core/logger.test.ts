import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/index.js';
import { clientFor, useMockServer } from '../helpers.js';

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
