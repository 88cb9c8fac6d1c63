import diagnostics from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import type { AttemptTrace, RequestTrace } from '../../src/index.js';
import { BillingClient, NotFoundError, RateLimitError } from '../../src/index.js';
import { caught, clientFor, recordTraces, type TraceEvent, useMockServer } from '../helpers.js';

const mock = useMockServer();

type Event = TraceEvent;

const ends = (events: Event[], channel: string) =>
  events.filter((e) => e.channel === channel && e.event === 'asyncEnd').map((e) => e.context);

let recorder: ReturnType<typeof recordTraces> | undefined;
afterEach(() => recorder?.stop());

describe('billing-sdk:request and billing-sdk:attempt', () => {
  it('traces a call with its operation, method and route, never the id it carries', async () => {
    recorder = recordTraces();
    const billing = clientFor(mock.server);
    await billing.accounts.status({ account_ref_id: 'acct_active', subscription: 'pro-plan' });
    const [call] = ends(recorder.events, 'billing-sdk:request');
    expect(call).toMatchObject({
      operation: 'accounts.status',
      method: 'GET',
      route: '/api/account/{account_ref_id}/status/',
      serverAddress: '127.0.0.1',
      serverPort: Number(new URL(mock.server.baseUrl).port),
      attempt: 1,
      status: 200,
    });
    expect(call?.requestId).toMatch(/\S/);
    expect(recorder.events.map((e) => `${e.channel} ${e.event}`)).toEqual([
      // The attempt starts after the cooldown let it through (an await): past the call's sync part.
      'billing-sdk:request start',
      'billing-sdk:request end',
      'billing-sdk:attempt start',
      'billing-sdk:attempt end',
      'billing-sdk:attempt asyncStart',
      'billing-sdk:attempt asyncEnd',
      'billing-sdk:request asyncStart',
      'billing-sdk:request asyncEnd',
    ]);
    const published = JSON.stringify(recorder.events);
    expect(published).not.toContain('acct_active');
    expect(published).not.toContain('pro-plan');
    expect(published).not.toContain(mock.server.apiKey);
  });

  it('shows each retry as an attempt, with the status and Retry-After of the ones that failed', async () => {
    mock.server.faults.add({ path: '/api/invoices/', status: 429, headers: { 'retry-after': '2' } });
    mock.server.faults.add({ path: '/api/invoices/', status: 503 });
    recorder = recordTraces();
    const billing = clientFor(mock.server);
    await billing.invoices.list({ email: 'ada@example.com', status: 'open' });
    const attempts = ends(recorder.events, 'billing-sdk:attempt');
    expect(attempts.map((a) => [a.attempt, a.status, a.retryAfterMs])).toEqual([
      [1, 429, 2000],
      [2, 503, undefined],
      [3, 200, undefined],
    ]);
    expect(recorder.events.filter((e) => e.event === 'error').map((e) => e.channel)).toEqual([
      'billing-sdk:attempt',
      'billing-sdk:attempt',
    ]);
    const [call] = ends(recorder.events, 'billing-sdk:request');
    expect(call).toMatchObject({ route: '/api/invoices/', attempt: 3, status: 200 });
    expect(JSON.stringify(recorder.events)).not.toContain('ada@example.com');
  });

  it('ends a failed call on the error event with the error the caller gets', async () => {
    recorder = recordTraces();
    const billing = clientFor(mock.server);
    const error = await caught(() => billing.accounts.status({ account_ref_id: 'acct_nobody' }));
    expect(error).toBeInstanceOf(NotFoundError);
    const failed = recorder.events.filter((e) => e.channel === 'billing-sdk:request' && e.event === 'error');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.context.error).toBe(error);
    expect(failed[0]?.context).toMatchObject({ status: 404, attempt: 1 });
    // The error is the caller's own (its message names the path it called); the fields beside it never do.
    const { error: _error, ...fields } = failed[0]?.context ?? {};
    expect(JSON.stringify(fields)).not.toContain('acct_nobody');
  });

  it('a call the cooldown refuses (nothing sent) is a failed call with no attempt', async () => {
    const billing = clientFor(mock.server);
    mock.server.faults.add({ path: '/api/invoices/', status: 429, headers: { 'retry-after': '600' } });
    await caught(() => billing.invoices.list({ account_ref_id: 'acct_active' }));
    recorder = recordTraces();
    const error = await caught(() => billing.invoices.list({ account_ref_id: 'acct_active' }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(recorder.events.filter((e) => e.channel === 'billing-sdk:attempt')).toEqual([]);
    const failed = recorder.events.filter((e) => e.channel === 'billing-sdk:request' && e.event === 'error');
    expect(failed.map((e) => [e.context.attempt, (e.context.error as Error).name])).toEqual([
      [0, 'RateLimitError'],
    ]);
    expect(mock.server.requests.count({ path: '/api/invoices/' })).toBe(1);
  });

  it('names an IPv6 server without brackets and the scheme default port (OTel server.address/port)', async () => {
    recorder = recordTraces();
    const billing = new BillingClient({
      apiKey: 'k',
      baseUrl: 'https://[::1]/api/',
      maxRetries: 0,
      timeout: 2_000,
    });
    await caught(() => billing.accounts.isActive({ account_ref_id: 'acct_active' }));
    const [start] = recorder.events.filter((e) => e.channel === 'billing-sdk:request' && e.event === 'start');
    expect(start?.context).toMatchObject({ serverAddress: '::1', serverPort: 443 });
  });

  it('traces every page of a list as its own call', async () => {
    recorder = recordTraces();
    const billing = clientFor(mock.server);
    let n = 0;
    for await (const _ of billing.invoices.list({ account_ref_id: 'acct_active', page_size: 20 })) n++;
    expect(n).toBe(45);
    const calls = ends(recorder.events, 'billing-sdk:request');
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.route))).toEqual(new Set(['/api/invoices/']));
  });

  it('a subscriber that throws changes no result (Node reports its error as uncaught)', async () => {
    const boom = new Error('subscriber bug');
    const thrower = () => {
      throw boom;
    };
    const tc = diagnostics.tracingChannel('billing-sdk:request');
    const at = diagnostics.tracingChannel('billing-sdk:attempt');
    const handlers = { start: thrower, end: thrower, asyncStart: thrower, asyncEnd: thrower, error: thrower };
    const uncaught: unknown[] = [];
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    tc.subscribe(handlers);
    at.subscribe(handlers);
    try {
      const billing = clientFor(mock.server);
      const status = await billing.accounts.status({ account_ref_id: 'acct_active' });
      expect(status).toEqual(await clientFor(mock.server).accounts.status({ account_ref_id: 'acct_active' }));
      mock.server.faults.add({ path: '/api/invoices/', status: 429, headers: { 'retry-after': '99999' } });
      const error = await caught(() => billing.invoices.list({ account_ref_id: 'acct_active' }));
      expect(error).toBeInstanceOf(RateLimitError);
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught.length).toBeGreaterThan(0);
      expect(uncaught.every((e) => e === boom)).toBe(true);
    } finally {
      tc.unsubscribe(handlers);
      at.unsubscribe(handlers);
      process.off('uncaughtException', onUncaught);
      for (const l of listeners) process.on('uncaughtException', l);
    }
  });

  it('publishes attempts to a subscriber of billing-sdk:attempt alone', async () => {
    const seen: AttemptTrace[] = [];
    const onEnd = (context: AttemptTrace) => void seen.push(context);
    const channel = diagnostics.tracingChannel<AttemptTrace>('billing-sdk:attempt');
    const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd: onEnd, error() {} };
    channel.subscribe(handlers);
    try {
      mock.server.faults.add({ path: '/api/invoices/', status: 503 });
      await clientFor(mock.server).invoices.list({ account_ref_id: 'acct_active' });
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(seen.map((a) => [a.attempt, a.status, a.request.attempt])).toEqual([
      [1, 503, 2],
      [2, 200, 2],
    ]);
    expect(diagnostics.tracingChannel('billing-sdk:attempt').hasSubscribers).toBe(false);
  });

  it('builds and publishes nothing once the last subscriber is gone', async () => {
    recorder = recordTraces();
    recorder.stop();
    const billing = clientFor(mock.server);
    await billing.accounts.isActive({ account_ref_id: 'acct_active' });
    expect(recorder.events).toEqual([]);
    expect(diagnostics.tracingChannel('billing-sdk:request').hasSubscribers).toBe(false);
  });

  it('types the contexts it publishes', () => {
    const call: RequestTrace = {
      operation: 'x',
      method: 'GET',
      route: '/api/x/',
      serverAddress: 'h',
      serverPort: 443,
      attempt: 1,
    };
    const attempt: AttemptTrace = {
      request: call,
      operation: 'x',
      method: 'GET',
      route: '/api/x/',
      attempt: 1,
    };
    expect(attempt.request.route).toBe('/api/x/');
  });
});
