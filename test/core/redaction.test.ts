import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BillingClient } from '../../src/index.js';
import { caught, clientFor, memoryLogger, useMockServer } from '../helpers.js';

const mock = useMockServer();

const secret = 'secret-key-that-must-never-print-7f3a';

/** Every way a user might print an error. */
function renderings(value: unknown): string[] {
  const err = value as Error;
  return [
    String(err),
    err.message,
    err.stack ?? '',
    JSON.stringify(err),
    inspect(err, { depth: 10, showHidden: true }),
  ];
}

describe('no secret is ever printed', () => {
  it('not by the client itself', () => {
    const billing = new BillingClient({ apiKey: secret, baseUrl: mock.server.baseUrl });
    for (const text of [
      String(billing),
      JSON.stringify(billing),
      inspect(billing, { depth: 10, showHidden: true }),
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('not by an authentication error (the key was sent and refused)', async () => {
    for (const authHeader of ['authorization', 'x-api-key'] as const) {
      const err = await caught(() =>
        clientFor(mock.server, { apiKey: secret, authHeader }).invoices.list({
          account_ref_id: 'acct_active',
        }),
      );
      expect(err.name).toBe('AuthenticationError');
      for (const text of renderings(err)) expect(text).not.toContain(secret);
    }
  });

  it('not by connection, timeout or rate-limit errors', async () => {
    mock.server.faults.add({ path: '/api/invoices/', reset: 'before' });
    mock.server.faults.add({ path: '/api/transactions/', delayMs: 500 });
    const billing = new BillingClient({
      apiKey: mock.server.apiKey,
      baseUrl: mock.server.baseUrl,
      maxRetries: 0,
      logLevel: 'off',
    });
    const errors = [
      await caught(() => billing.invoices.list({ account_ref_id: 'acct_active' })),
      await caught(() => billing.transactions.list({ account_ref_id: 'acct_active' }, { timeout: 50 })),
    ];
    expect(errors.map((e) => e.name)).toEqual(['APIConnectionError', 'APITimeoutError']);
    for (const err of errors)
      for (const text of renderings(err)) expect(text).not.toContain(mock.server.apiKey);
  });

  it('not by the logger, at debug level, through retries and failures', async () => {
    const logger = memoryLogger();
    mock.server.faults.add({ path: '/api/invoices/', status: 503, headers: { 'retry-after': '0' } });
    const billing = clientFor(mock.server, { apiKey: mock.server.apiKey, logger, logLevel: 'debug' });
    await billing.invoices.list({ account_ref_id: 'acct_active' });
    await caught(() =>
      clientFor(mock.server, { apiKey: secret, logger, logLevel: 'debug' }).invoices.list({
        email: 'x@example.com',
      }),
    );
    expect(logger.lines.length).toBeGreaterThan(1);
    for (const line of logger.lines) {
      expect(line).not.toContain(mock.server.apiKey);
      expect(line).not.toContain(secret);
    }
  });
});
