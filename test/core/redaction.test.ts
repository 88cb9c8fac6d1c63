import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BillingClient, InvalidRequestError } from '../../src/index.js';
import { caught, clientFor, memoryLogger, recordTraces, serveNode, useMockServer } from '../helpers.js';

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

  it.each([
    ['NUL', 'key\u0000tail'],
    ['CR LF', 'key\r\nX-Injected: 1'],
    ['a pasted newline', 'sk_abcdef\n'],
    ['a space', 'sk abc'],
    ['non-ASCII', 'clé'],
  ])('not by the constructor refusing a key with %s (refused before any request)', async (_, key) => {
    const err = await caught(() => new BillingClient({ apiKey: key, baseUrl: mock.server.baseUrl }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect((err as InvalidRequestError).issues[0]?.field).toBe('apiKey');
    for (const text of renderings(err)) expect(text).not.toContain(key.trim());
    expect(mock.server.requests.count()).toBe(0);
  });

  it('not by a cause that quotes the key: causes are scrubbed, the message names the root cause, toJSON the cause', async () => {
    // An engine failure no server can produce: fetch itself throws, quoting the header (as undici does).
    const billing = clientFor(mock.server, {
      apiKey: secret,
      maxRetries: 0,
      fetch: async () => {
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error(`invalid header value "Bearer ${secret}"`), {
            code: 'UND_ERR_INVALID_ARG',
          }),
        });
      },
    });
    const err = await caught(() => billing.invoices.list({ account_ref_id: 'acct_active' }));
    expect(err.name).toBe('APIConnectionError');
    for (const text of renderings(err)) expect(text).not.toContain(secret);
    expect(JSON.parse(JSON.stringify(err)).cause).toBe('TypeError: fetch failed');
    expect(err.message).toContain('UND_ERR_INVALID_ARG invalid header value "Bearer [redacted]"');
  });
});

/** A server that echoes the credential it got, and the request's query, everywhere an answer can. */
async function echoingServer() {
  return serveNode((req, res) => {
    const credential = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '');
    const key = credential.replace(/^Bearer /, '');
    const query = (req.url ?? '').split('?')[1] ?? '';
    const echo = {
      'x-echo': credential,
      'x-debug': `key=${key}; again ${encodeURIComponent(key)}`,
      location: `https://elsewhere.example/api/invoices/?${query}&k=${encodeURIComponent(key)}#${key}`,
      'content-location': `/api/invoices/?${query}`,
    };
    if (req.url?.startsWith('/api/invoices/')) {
      res.writeHead(301, { ...echo, 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: `moved; you sent ${credential}`, nested: { [key]: [key] } }));
    } else if (req.url?.startsWith('/api/transactions/')) {
      res.writeHead(500, { ...echo, 'content-type': 'text/plain' });
      res.end(`upstream refused ${credential} for ${query}`);
    } else {
      // A 2xx that fails validation, echoing the key in its body.
      res.writeHead(200, { ...echo, 'content-type': 'application/json' });
      res.end(JSON.stringify({ unexpected: key }));
    }
  });
}

describe('an answer that echoes the key, or the query, never puts it in an error or a log', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(() => close?.());

  it.each(['authorization', 'x-api-key'] as const)(
    'with authHeader %s: message, String, stack, JSON, inspect, every kept header, body and logs',
    async (authHeader) => {
      const server = await echoingServer();
      close = server.close;
      const logger = memoryLogger();
      const billing = new BillingClient({
        apiKey: `${secret}+/=`, // characters a URL encodes: the encoded form is scrubbed too
        authHeader,
        baseUrl: `${server.url}/api/`,
        maxRetries: 1,
        retryDelay: () => 0,
        logger,
        logLevel: 'debug',
      });
      const key = `${secret}+/=`;
      const email = 'ada@example.com';
      const traces = recordTraces();
      const errors = [
        await caught(() => billing.invoices.list({ email })),
        await caught(() => billing.transactions.list({ account_ref_id: 'acct_1' })),
        await caught(() =>
          billing.resolve.publicUrl({ account_ref_id: 'acct_1', product_name: 'ebook', email }),
        ),
      ];
      expect(errors.map((e) => e.name)).toEqual([
        'APIError',
        'InternalServerError',
        'ResponseValidationError',
      ]);
      const forbidden = [secret, encodeURIComponent(key), 'ada%40example.com', email];
      for (const err of errors) {
        const texts = [
          ...renderings(err),
          JSON.stringify((err as { headers?: unknown }).headers ?? {}),
          JSON.stringify((err as { body?: unknown }).body ?? null),
        ];
        for (const text of texts) for (const bad of forbidden) expect(text).not.toContain(bad);
      }
      const moved = errors[0] as unknown as { headers: Record<string, string>; message: string };
      expect(moved.headers.location).toBe('https://elsewhere.example/api/invoices/');
      expect(moved.headers['content-location']).toBe('/api/invoices/');
      expect(moved.headers['x-echo']).toContain('[redacted]');
      expect(moved.message).toContain('redirecting to https://elsewhere.example/api/invoices/');
      expect(logger.lines.length).toBeGreaterThan(2);
      for (const line of logger.lines) for (const bad of forbidden) expect(line).not.toContain(bad);
      traces.stop();
      expect(traces.events.length).toBeGreaterThan(6);
      for (const { context } of traces.events) {
        const text = inspect(context, { depth: 10, showHidden: true });
        for (const bad of forbidden) expect(text).not.toContain(bad);
      }
    },
  );
});
