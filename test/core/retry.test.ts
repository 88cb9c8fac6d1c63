import { describe, expect, it } from 'vitest';
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  BillingClient,
  InternalServerError,
  InvalidRequestError,
  RateLimitError,
  type RequestContext,
  ResponseTooLargeError,
  ResponseValidationError,
} from '../../src/index.js';
import { backoffDelay, type RetryPolicy, retryDecision } from '../../src/internal/retry.js';
import { parseRetryAfter } from '../../src/util/retry-after.js';
import {
  caught,
  clientFor,
  heldClock,
  instantClock,
  memoryLogger,
  startMock,
  until,
  useMockServer,
} from '../helpers.js';

const mock = useMockServer();

const ctx: RequestContext = { operation: 'test.op', method: 'GET', path: '/api/x/' };
const status = (code: number, headers: Record<string, string> = {}) =>
  new (code === 429
    ? RateLimitError
    : code >= 500
      ? InternalServerError
      : code === 400
        ? BadRequestError
        : APIError)(code, headers, undefined, ctx);
const refused = new APIConnectionError(ctx, {
  cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }),
});
const reset = new APIConnectionError(ctx, {
  cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
});
const get: RetryPolicy = { maxRetries: 2, maxRetryDelay: 60_000, idempotent: true };
const post: RetryPolicy = { ...get, idempotent: false };
const one = () => 1;

describe('retryDecision: the whole policy as a table', () => {
  it.each([
    // [case, error, attempt, policy, expected]
    ['503 on a GET: backoff', status(503), 1, get, { retry: true, delayMs: 500 }],
    ['second retry doubles', status(503), 2, get, { retry: true, delayMs: 1000 }],
    ['budget spent', status(503), 3, get, { retry: false, reason: 'no retries left' }],
    ['408', status(408), 1, get, { retry: true, delayMs: 500 }],
    ['409', status(409), 1, get, { retry: true, delayMs: 500 }],
    ['429 without Retry-After', status(429), 1, get, { retry: true, delayMs: 500 }],
    ['500', status(500), 1, get, { retry: true, delayMs: 500 }],
    ['400 is the caller’s', status(400), 1, get, { retry: false, reason: 'not retryable' }],
    ['404', status(404), 1, get, { retry: false, reason: 'not retryable' }],
    [
      'a 3xx is never retried',
      status(302, { location: 'https://elsewhere.example/' }),
      1,
      get,
      { retry: false, reason: 'not retryable' },
    ],
    [
      'Retry-After seconds win over backoff',
      status(429, { 'retry-after': '3' }),
      1,
      get,
      { retry: true, delayMs: 3000 },
    ],
    ['Retry-After 0', status(503, { 'retry-after': '0' }), 1, get, { retry: true, delayMs: 0 }],
    ['retry-after-ms', status(503, { 'retry-after-ms': '250' }), 1, get, { retry: true, delayMs: 250 }],
    [
      'Retry-After beyond maxRetryDelay gives up at once',
      status(429, { 'retry-after': '120' }),
      1,
      get,
      { retry: false, reason: 'Retry-After exceeds maxRetryDelay' },
    ],
    [
      'maxRetryDelay never cuts the SDK’s own backoff',
      status(503),
      4,
      { maxRetries: 5, maxRetryDelay: 1000, idempotent: true },
      { retry: true, delayMs: 4000 },
    ],
    [
      '503 on a plain POST: may have been applied',
      status(503),
      1,
      post,
      { retry: false, reason: 'not retryable' },
    ],
    [
      'reset on a plain POST: may have been applied',
      reset,
      1,
      post,
      { retry: false, reason: 'not retryable' },
    ],
    ['refused on a plain POST: provably never sent', refused, 1, post, { retry: true, delayMs: 500 }],
    ['reset on a GET', reset, 1, get, { retry: true, delayMs: 500 }],
    ['timeout on a GET', new APITimeoutError(ctx, 100), 1, get, { retry: true, delayMs: 500 }],
    ['user abort', new APIUserAbortError(ctx), 1, get, { retry: false, reason: 'not retryable' }],
    ['bad input', new InvalidRequestError('x', []), 1, get, { retry: false, reason: 'not retryable' }],
    [
      'unexpected body',
      new ResponseValidationError(ctx, [], {}),
      1,
      get,
      { retry: false, reason: 'not retryable' },
    ],
    [
      'oversized body',
      new ResponseTooLargeError(ctx, 200, 10, undefined),
      1,
      get,
      { retry: false, reason: 'not retryable' },
    ],
    ['zero retries', status(503), 1, { ...get, maxRetries: 0 }, { retry: false, reason: 'no retries left' }],
    [
      'a retryDelay replaces the backoff',
      status(503),
      2,
      { ...get, retryDelay: (n: number) => n * 7 },
      { retry: true, delayMs: 14 },
    ],
    [
      'but never a Retry-After',
      status(503, { 'retry-after': '2' }),
      1,
      { ...get, retryDelay: () => 0 },
      { retry: true, delayMs: 2000 },
    ],
  ] as const)('%s', (_, error, attempt, policy, expected) => {
    expect(retryDecision(error, attempt, policy, one)).toEqual(expected);
  });
});

describe('Retry-After and backoff (pure)', () => {
  it('reads delta-seconds, an HTTP-date and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter({ 'retry-after': '3' }, now)).toBe(3000);
    expect(parseRetryAfter({ 'retry-after': '0.5' }, now)).toBeUndefined();
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

const invoices = '/api/invoices/';
const listInvoices = (options = {}, requestOptions = {}, clock = instantClock()) =>
  clientFor(mock.server, options, clock).invoices.list({ account_ref_id: 'acct_active' }, requestOptions);

describe('the retry loop over HTTP (waits recorded by an injected clock, never sat through)', () => {
  it('retries a 503 and returns the later success', async () => {
    mock.server.faults.add({ path: invoices, status: 503 });
    const clock = instantClock();
    const page = await listInvoices({}, {}, clock);
    expect(page.results.length).toBeGreaterThan(0);
    expect(mock.server.requests.count()).toBe(2);
    expect(clock.waits).toHaveLength(1);
    expect(clock.waits[0]).toBeGreaterThanOrEqual(375);
    expect(clock.waits[0]).toBeLessThanOrEqual(500);
  });

  it.each([408, 409, 429, 500, 502])('retries %i', async (code) => {
    mock.server.faults.add({ path: invoices, status: code });
    await listInvoices();
    expect(mock.server.requests.count()).toBe(2);
  });

  it('waits what Retry-After asks: seconds, then an HTTP-date', async () => {
    const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 5000).toUTCString();
    mock.server.faults.add({ path: invoices, status: 429, headers: { 'retry-after': '7' } });
    mock.server.faults.add({ path: invoices, status: 503, headers: { 'retry-after': at } });
    const clock = instantClock();
    await listInvoices({}, {}, clock);
    expect(clock.waits[0]).toBe(7000);
    expect(clock.waits[1]).toBeGreaterThan(3000);
    expect(clock.waits[1]).toBeLessThanOrEqual(5000);
    expect(mock.server.requests.count()).toBe(3);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    mock.server.faults.add({ path: invoices, status: 500, times: 10 });
    const err = await caught(() => listInvoices({ maxRetries: 3 }));
    expect(err).toBeInstanceOf(InternalServerError);
    expect(mock.server.requests.count()).toBe(4);
  });

  it('maxRetryDelay bounds what the server asks, not the backoff: 5 retries all happen', async () => {
    mock.server.faults.add({ path: invoices, status: 503, times: 10 });
    const clock = instantClock();
    const err = await caught(() => listInvoices({ maxRetryDelay: 1000, maxRetries: 5 }, {}, clock));
    expect(err).toBeInstanceOf(InternalServerError);
    expect(mock.server.requests.count()).toBe(6);
    expect(clock.waits.map((w) => w > 1000)).toEqual([false, false, true, true, true]);
  });

  it('retryDelay: () => 0 makes retries instant for your own tests (real clock)', async () => {
    mock.server.faults.add({ path: invoices, status: 503, times: 2 });
    mock.server.faults.add({ path: invoices, reset: 'before' });
    const asked: number[] = [];
    const billing = new BillingClient({
      apiKey: mock.server.apiKey,
      baseUrl: mock.server.baseUrl,
      logLevel: 'off',
      maxRetries: 3,
      retryDelay: (retry) => {
        asked.push(retry);
        return 0;
      },
    });
    const page = await billing.invoices.list({ account_ref_id: 'acct_active' });
    expect(page.results.length).toBeGreaterThan(0);
    expect(asked).toEqual([1, 2, 3]);
  });

  it('honours a per-request maxRetries', async () => {
    mock.server.faults.add({ path: invoices, status: 500, times: 10 });
    await caught(() => listInvoices({}, { maxRetries: 0 }));
    expect(mock.server.requests.count()).toBe(1);
  });

  it('does not retry a 400', async () => {
    mock.server.faults.add({ path: invoices, status: 400, body: '{"page":["Invalid page."]}' });
    const err = await caught(() => listInvoices());
    expect(err).toBeInstanceOf(BadRequestError);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('throws RateLimitError at once when Retry-After exceeds maxRetryDelay', async () => {
    mock.server.faults.add({ path: invoices, status: 429, headers: { 'retry-after': '30' } });
    const clock = instantClock();
    const err = (await caught(() => listInvoices({ maxRetryDelay: 5_000 }, {}, clock))) as RateLimitError;
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err.retryAfterMs).toBe(30_000);
    expect(clock.waits).toEqual([]);
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

  it('retries a connection reset before the server handled the request', async () => {
    mock.server.faults.add({ path: invoices, reset: 'before' });
    const page = await listInvoices();
    expect(page.results.length).toBeGreaterThan(0);
    expect(mock.server.requests.count()).toBe(2);
  });

  it('throws APIConnectionError with the cause, the attempts and the time spent', async () => {
    mock.server.faults.add({ path: invoices, reset: 'before', times: 3 });
    const err = (await caught(() => listInvoices({ maxRetries: 2 }))) as APIConnectionError;
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err.cause).toBeInstanceOf(Error); // the engine's own error for the reset
    expect(err.attempts).toBe(3);
    expect(err.message).toMatch(
      /^invoices\.list \(GET \/api\/invoices\/\): connection error: .+ \(3 attempts in \d+\.\d s\)$/,
    );
  });

  it('names the refused address in the message', async () => {
    const closed = await startMock();
    const { baseUrl } = closed;
    await closed.close();
    const port = new URL(baseUrl).port;
    const err = await caught(() =>
      clientFor(closed, { baseUrl, maxRetries: 1 }).invoices.list({ account_ref_id: 'a' }),
    );
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err.message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(err.message).toContain('(2 attempts in');
  });
});

describe('timeouts and aborts', () => {
  it('times out an attempt, retries, then throws APITimeoutError', async () => {
    mock.server.faults.add({ path: invoices, delayMs: 1_000, times: 2 });
    const err = (await caught(() => listInvoices({ timeout: 100, maxRetries: 1 }))) as APITimeoutError;
    expect(err).toBeInstanceOf(APITimeoutError);
    expect(err.timeoutMs).toBe(100);
    expect(err.message).toMatch(/timed out after 100 ms \(2 attempts in \d+\.\d s\)$/);
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
    const pending = caught(() => listInvoices({}, { signal: controller.signal }));
    await until(() => mock.server.requests.count() === 1);
    controller.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
  });

  it('accepts a polyfilled signal without throwIfAborted, and honours it', async () => {
    const controller = new AbortController();
    const polyfill = {
      get aborted() {
        return controller.signal.aborted;
      },
      get reason() {
        return controller.signal.reason;
      },
      addEventListener: controller.signal.addEventListener.bind(controller.signal),
      removeEventListener: controller.signal.removeEventListener.bind(controller.signal),
    } as unknown as AbortSignal;
    mock.server.faults.add({ path: invoices, status: 503 });
    const page = await listInvoices({}, { signal: polyfill });
    expect(page.results.length).toBeGreaterThan(0);
    controller.abort();
    expect(await caught(() => listInvoices({}, { signal: polyfill }))).toBeInstanceOf(APIUserAbortError);
  });

  it('aborts during the wait between retries', async () => {
    mock.server.faults.add({ path: invoices, status: 429, headers: { 'retry-after': '10' } });
    const controller = new AbortController();
    const clock = heldClock();
    const pending = caught(() => listInvoices({}, { signal: controller.signal }, clock));
    await clock.waiting;
    controller.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
    expect(clock.waits).toEqual([10_000]);
    expect(mock.server.requests.count()).toBe(1);
  });
});

describe('POSTs', () => {
  const createInvoice = (options = {}) =>
    clientFor(mock.server, options).invoices.create({
      product_manage_id: 'prod_consulting',
      amount: 250,
      customer_email: 'ada@example.com',
    });

  it('never retries a POST that is not idempotent once it may have been sent', async () => {
    mock.server.faults.add({ path: '/api/invoices/create/', status: 503, headers: { 'retry-after': '0' } });
    const err = await caught(() => createInvoice());
    expect(err).toBeInstanceOf(InternalServerError);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('never retries a non-idempotent POST whose connection was reset', async () => {
    mock.server.faults.add({ path: '/api/invoices/create/', reset: 'before' });
    const err = await caught(() => createInvoice());
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(mock.server.requests.count()).toBe(1);
  });

  it('retries an idempotent POST, sending the same body and key again', async () => {
    mock.server.faults.add({ path: '/api/usage/events/', status: 503, headers: { 'retry-after': '0' } });
    const result = await clientFor(mock.server).usage.record({
      account_ref_id: 'acct_active',
      product_code: 'api-gateway',
      meter_code: 'api_calls',
      quantity: 1,
    });
    const sent = mock.server.requests.all().map((r) => r.body);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]);
    expect((sent[0] as { event_key: string }).event_key).toBe(result.event_key);
  });

  it('retries a POST whose connection was refused (never sent)', async () => {
    const closed = await startMock();
    const { baseUrl } = closed;
    await closed.close();
    const logger = memoryLogger();
    const err = await caught(() =>
      clientFor(closed, { baseUrl, logger, logLevel: 'info', maxRetries: 1 }).invoices.create({
        product_manage_id: 'p',
        amount: 1,
        customer_email: 'a@example.com',
      }),
    );
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(logger.lines.filter((l) => l.includes('retrying POST /api/invoices/create/'))).toHaveLength(1);
  });
});
