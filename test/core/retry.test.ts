import { describe, expect, it } from 'vitest';
import { resolveOptions } from '../../src/core/options.js';
import { ApiCore } from '../../src/core/request.js';
import { backoffDelay } from '../../src/core/retry.js';
import { parseRetryAfter } from '../../src/core/retry-after.js';
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
} from '../../src/index.js';
import { caught, clientFor, memoryLogger, startMock, useMockServer } from '../helpers.js';

const mock = useMockServer();

const invoices = '/api/invoices/';
const listInvoices = (options = {}, requestOptions = {}) =>
  clientFor(mock.server, options).invoices.list({ account_ref_id: 'acct_active' }, requestOptions);

describe('Retry-After and backoff (pure)', () => {
  it('reads delta-seconds, an HTTP-date and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter({ 'retry-after': '3' }, now)).toBe(3000);
    expect(parseRetryAfter({ 'retry-after': '0.5' }, now)).toBe(500);
    expect(parseRetryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }, now)).toBe(10_000);
    expect(parseRetryAfter({ 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' }, now)).toBe(0);
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
    expect(parseRetryAfter({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(parseRetryAfter({}, now)).toBeUndefined();
  });

  it('backs off exponentially from about 0.5 s to 8 s with jitter', () => {
    expect(backoffDelay(1, () => 1)).toBe(500);
    expect(backoffDelay(1, () => 0)).toBe(375);
    expect(backoffDelay(2, () => 1)).toBe(1000);
    expect(backoffDelay(4, () => 1)).toBe(4000);
    expect(backoffDelay(10, () => 1)).toBe(8000);
  });
});

describe('retries over HTTP', () => {
  it('retries a 503 and returns the later success', async () => {
    mock.server.faults.add({ path: invoices, status: 503, headers: { 'retry-after': '0' } });
    const page = await listInvoices();
    expect(page.results.length).toBeGreaterThan(0);
    expect(mock.server.requests.count()).toBe(2);
  });

  it.each([408, 409, 429, 500, 502])('retries %i', async (status) => {
    mock.server.faults.add({ path: invoices, status, headers: { 'retry-after': '0' } });
    await listInvoices();
    expect(mock.server.requests.count()).toBe(2);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    mock.server.faults.add({ path: invoices, status: 500, times: 10, headers: { 'retry-after': '0' } });
    const err = await caught(() => listInvoices({ maxRetries: 3 }));
    expect(err).toBeInstanceOf(InternalServerError);
    expect(mock.server.requests.count()).toBe(4);
  });

  it('honours a per-request maxRetries', async () => {
    mock.server.faults.add({ path: invoices, status: 500, times: 10, headers: { 'retry-after': '0' } });
    await caught(() => listInvoices({}, { maxRetries: 0 }));
    expect(mock.server.requests.count()).toBe(1);
  });

  it('does not retry a 400', async () => {
    mock.server.faults.add({ path: invoices, status: 400, body: '{"page":["Invalid page."]}' });
    const err = await caught(() => listInvoices());
    expect(err).toBeInstanceOf(BadRequestError);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('waits as long as Retry-After (seconds) says', async () => {
    mock.server.faults.add({ path: invoices, status: 429, headers: { 'retry-after': '1' } });
    const started = performance.now();
    await listInvoices();
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(mock.server.requests.count()).toBe(2);
  });

  it('waits until a Retry-After HTTP-date', async () => {
    // HTTP-dates have whole seconds: aim two seconds ahead so the wait is between 1 and 2 s.
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 2000).toUTCString();
    mock.server.faults.add({ path: invoices, status: 503, headers: { 'retry-after': at } });
    const started = performance.now();
    await listInvoices();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(2600);
  });

  it('backs off without Retry-After', async () => {
    mock.server.faults.add({ path: invoices, status: 503 });
    const started = performance.now();
    await listInvoices();
    expect(performance.now() - started).toBeGreaterThanOrEqual(370);
  });

  it('throws RateLimitError at once when Retry-After exceeds maxRetryDelay', async () => {
    mock.server.faults.add({ path: invoices, status: 429, headers: { 'retry-after': '30' } });
    const started = performance.now();
    const err = (await caught(() => listInvoices({ maxRetryDelay: 5_000 }))) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.retryAfterMs).toBe(30_000);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('logs each retry at info level', async () => {
    const logger = memoryLogger();
    mock.server.faults.add({ path: invoices, status: 503, headers: { 'retry-after': '0' } });
    await listInvoices({ logger, logLevel: 'info' });
    expect(logger.lines.some((l) => l.includes('retrying GET /api/invoices/ in 0 ms (retry 1 of 2)'))).toBe(
      true,
    );
  });

  it('retries a connection reset before the mock.server handled the request', async () => {
    mock.server.faults.add({ path: invoices, reset: 'before' });
    const page = await listInvoices();
    expect(page.results.length).toBeGreaterThan(0);
    expect(mock.server.requests.count()).toBe(2);
  });

  it('throws APIConnectionError with the cause when every attempt is reset', async () => {
    mock.server.faults.add({ path: invoices, reset: 'before', times: 3 });
    const err = await caught(() => listInvoices({ maxRetries: 0 }));
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err.cause).toBeDefined();
  });
});

describe('timeouts and aborts', () => {
  it('times out an attempt, retries, then throws APITimeoutError', async () => {
    mock.server.faults.add({ path: invoices, delayMs: 1_000, times: 2 });
    const err = await caught(() => listInvoices({ timeout: 100, maxRetries: 1 }));
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err.message).toContain('timed out after 100 ms');
    expect(mock.server.requests.count()).toBe(2);
  });

  it('succeeds when a retry after a timeout is fast', async () => {
    mock.server.faults.add({ path: invoices, delayMs: 1_000 });
    const page = await listInvoices({}, { timeout: 150 });
    expect(page.results.length).toBeGreaterThan(0);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const err = await caught(() => listInvoices({}, { signal: AbortSignal.abort() }));
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('aborts a request in flight', async () => {
    mock.server.faults.add({ path: invoices, delayMs: 2_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const err = await caught(() => listInvoices({}, { signal: controller.signal }));
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('aborts during the wait between retries', async () => {
    mock.server.faults.add({ path: invoices, status: 429, headers: { 'retry-after': '10' } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = performance.now();
    const err = await caught(() => listInvoices({}, { signal: controller.signal }));
    expect(err).toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(mock.server.requests.count()).toBe(1);
  });
});

describe('POSTs', () => {
  const core = () =>
    new ApiCore(
      resolveOptions({ apiKey: mock.server.apiKey, baseUrl: mock.server.baseUrl, logLevel: 'off' }),
    );
  const anything = {
    safeParse: (d: unknown) => ({ success: true as const, data: d }),
    parse: (d: unknown) => d,
  };

  /** A POST without an idempotency key, as invoices.create sends. */
  const createPost = () =>
    core().request({
      operation: 'test.post',
      method: 'POST',
      path: 'invoices/create/',
      body: {},
      schema: anything,
    });

  it('never retries a POST that is not idempotent once it may have been sent', async () => {
    mock.server.faults.add({ path: '/api/invoices/create/', status: 503, headers: { 'retry-after': '0' } });
    const err = await caught(createPost);
    expect(err).toBeInstanceOf(InternalServerError);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('never retries a non-idempotent POST whose connection was reset', async () => {
    mock.server.faults.add({ path: '/api/invoices/create/', reset: 'before' });
    const err = await caught(createPost);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('retries a POST marked idempotent, sending the same body again', async () => {
    mock.server.faults.add({ path: '/api/usage/events/', status: 503, headers: { 'retry-after': '0' } });
    const body = {
      account_ref_id: 'acct_active',
      product_code: 'api-gateway',
      meter_code: 'api_calls',
      quantity: 1,
      event_key: 'k-retry-1',
    };
    await core().request({
      operation: 'test.post',
      method: 'POST',
      path: 'usage/events/',
      body,
      schema: anything,
      idempotent: true,
    });
    const sent = mock.server.requests.all().map((r) => r.body);
    expect(sent).toEqual([body, body]);
  });

  it('retries a POST whose connection was refused (never sent)', async () => {
    const closed = await startMock();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const logger = memoryLogger();
    const err = await caught(() =>
      new ApiCore(resolveOptions({ apiKey: 'k', baseUrl, logger, logLevel: 'info', maxRetries: 1 })).request({
        operation: 'test.post',
        method: 'POST',
        path: 'invoices/create/',
        body: {},
        schema: anything,
      }),
    );
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(logger.lines.filter((l) => l.includes('retrying POST /api/invoices/create/'))).toHaveLength(1);
  });
});
