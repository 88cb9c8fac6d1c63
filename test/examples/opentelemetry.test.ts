import diagnostics from 'node:diagnostics_channel';
import { type Attributes, type Meter, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TrackerEvent } from '../../src/index.js';
import {
  BillingClient,
  createAccessCache,
  createGate,
  createUsageTracker,
  NotFoundError,
} from '../../src/index.js';
import { caught, until, useMockServer } from '../helpers.js';

// The example is plain JS (no types to import): loaded by URL and given its signature here.
type Instrument = (otel: { tracer: Tracer; meter: Meter }) => () => void;
const { instrumentBillingSdk } = (await import(
  new URL('../../examples/opentelemetry.mjs', import.meta.url).href
)) as { instrumentBillingSdk: Instrument };

const mock = useMockServer();

const ACCOUNT = 'acct_active';
const EMAIL = 'ada@example.com';
const STATUS_ROUTE = '/api/account/{account_ref_id}/status/';

/** Collects on demand: what a PeriodicExportingMetricReader would export at its next tick. */
class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let exporter: InMemorySpanExporter;
let reader: ManualReader;
let tracerProvider: BasicTracerProvider;
let meterProvider: MeterProvider;
let stop: () => void;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  reader = new ManualReader();
  meterProvider = new MeterProvider({ readers: [reader] });
  stop = instrumentBillingSdk({
    tracer: tracerProvider.getTracer('test'),
    meter: meterProvider.getMeter('test'),
  });
});

afterEach(async () => {
  stop();
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
});

const client = () =>
  new BillingClient({
    apiKey: mock.server.apiKey,
    baseUrl: mock.server.baseUrl,
    retryDelay: () => 0,
    logLevel: 'off',
  });
const port = () => Number(new URL(mock.server.baseUrl).port);
const server = () => ({ 'server.address': '127.0.0.1', 'server.port': port() });

/** The spans of calls (no parent), in the order they ended. */
const calls = () => exporter.getFinishedSpans().filter((s) => !s.parentSpanContext);
/** The attempt spans under `call`, in the order they started. */
const attemptsOf = (call: ReadableSpan) =>
  exporter
    .getFinishedSpans()
    .filter((s) => s.parentSpanContext?.spanId === call.spanContext().spanId)
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);

async function metrics(): Promise<MetricData[]> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
}
function pointsOf<T = number>(all: MetricData[], name: string): DataPoint<T>[] {
  return (all.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as DataPoint<T>[];
}
/** A counter's or gauge's points as `{ 'attr=value,…': value }`. */
const byAttributes = (points: DataPoint<number>[]) =>
  Object.fromEntries(
    points.map((p) => [
      Object.entries(p.attributes)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
      p.value,
    ]),
  );

describe('examples/opentelemetry.mjs: instrumentBillingSdk', () => {
  it('a plain call: an INTERNAL span named by its operation, its attempt a CLIENT span under it', async () => {
    await client().accounts.status({ account_ref_id: ACCOUNT });
    const [call, ...others] = calls();
    expect(others).toEqual([]);
    expect(call?.name).toBe('accounts.status');
    expect(call?.kind).toBe(SpanKind.INTERNAL);
    expect(call?.status.code).toBe(SpanStatusCode.UNSET);
    expect(call?.attributes).toEqual({
      'billing_sdk.operation': 'accounts.status',
      'http.request.method': 'GET',
      'url.template': STATUS_ROUTE,
      ...server(),
      'billing_sdk.retry_count': 0,
      'http.response.status_code': 200,
    });

    const attempts = attemptsOf(call!);
    expect(attempts).toHaveLength(1);
    const [attempt] = attempts;
    expect(attempt?.name).toBe(`GET ${STATUS_ROUTE}`);
    expect(attempt?.kind).toBe(SpanKind.CLIENT);
    expect(attempt?.spanContext().traceId).toBe(call?.spanContext().traceId);
    expect(attempt?.status.code).toBe(SpanStatusCode.UNSET);
    expect(attempt?.attributes).toEqual({
      'http.request.method': 'GET',
      'url.template': STATUS_ROUTE,
      ...server(),
      'http.response.status_code': 200,
      'http.response.header.x-request-id': [mock.server.requests.last()?.requestId],
    });
    expect(exporter.getFinishedSpans()).toHaveLength(2);
  });

  it('a retried call: two attempts, the first failed with 503, the second a resend', async () => {
    mock.server.faults.add({ path: '/api/invoices/', status: 503 });
    await client().invoices.list({ email: EMAIL, status: 'open' });
    const [call] = calls();
    expect(call?.name).toBe('invoices.list');
    expect(call?.status.code).toBe(SpanStatusCode.UNSET);
    expect(call?.attributes).toMatchObject({
      'billing_sdk.retry_count': 1,
      'http.response.status_code': 200,
    });
    expect(call?.attributes).not.toHaveProperty('error.type');

    const [first, second, ...more] = attemptsOf(call!);
    expect(more).toEqual([]);
    expect([first?.name, second?.name]).toEqual(['GET /api/invoices/', 'GET /api/invoices/']);
    expect(first?.status.code).toBe(SpanStatusCode.ERROR);
    expect(first?.attributes).toMatchObject({
      'http.response.status_code': 503,
      'error.type': 'InternalServerError',
    });
    expect(first?.attributes).not.toHaveProperty('http.request.resend_count');
    expect(second?.status.code).toBe(SpanStatusCode.UNSET);
    expect(second?.attributes).toMatchObject({
      'http.request.resend_count': 1,
      'http.response.status_code': 200,
    });
    expect(second?.attributes).not.toHaveProperty('error.type');
  });

  it('a failed call: status ERROR with the error class as error.type, never its message', async () => {
    const error = await caught(() => client().accounts.status({ account_ref_id: 'acct_nobody' }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toContain('acct_nobody'); // what must stay out of the spans
    const [call] = calls();
    const [attempt] = attemptsOf(call!);
    for (const span of [call, attempt]) {
      expect(span?.status).toEqual({ code: SpanStatusCode.ERROR });
      expect(span?.attributes).toMatchObject({
        'http.response.status_code': 404,
        'error.type': 'NotFoundError',
      });
      expect(span?.events).toEqual([]);
    }
    expect(call?.attributes['billing_sdk.retry_count']).toBe(0);
    expect(JSON.stringify(exporter.getFinishedSpans().map((s) => [s.name, s.attributes]))).not.toContain(
      'acct_nobody',
    );
  });

  it('records http.client.request.duration once per attempt, by method, route, status and error', async () => {
    const billing = client();
    await billing.accounts.status({ account_ref_id: ACCOUNT });
    mock.server.faults.add({ path: '/api/invoices/', status: 503 });
    await billing.invoices.list({ account_ref_id: ACCOUNT });
    await caught(() => billing.accounts.status({ account_ref_id: 'acct_nobody' }));

    const all = await metrics();
    const duration = all.find((m) => m.descriptor.name === 'http.client.request.duration');
    expect(duration?.descriptor.unit).toBe('s');
    const points = pointsOf<Histogram>(all, 'http.client.request.duration');
    const attempts = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT).length;
    expect(attempts).toBe(4);
    expect(points.reduce((n, p) => n + p.value.count, 0)).toBe(attempts);
    expect(mock.server.requests.count()).toBe(attempts);
    const failed = points.find((p) => p.attributes['http.response.status_code'] === 503);
    expect(failed?.attributes).toEqual({
      'http.request.method': 'GET',
      'url.template': '/api/invoices/',
      ...server(),
      'http.response.status_code': 503,
      'error.type': 'InternalServerError',
    });
    expect(failed?.value.count).toBe(1);
    const ok = points.find(
      (p) =>
        p.attributes['url.template'] === STATUS_ROUTE && p.attributes['http.response.status_code'] === 200,
    );
    expect(ok?.value.count).toBe(1);
    expect(ok?.value.sum).toBeGreaterThan(0);
    expect(ok?.value.sum).toBeLessThan(10); // seconds, not ms
  });

  it('counts access cache lookups by result, so the hit ratio follows', async () => {
    const access = createAccessCache(client());
    try {
      for (let i = 0; i < 3; i++) await access.isActive({ account_ref_id: ACCOUNT });
      await access.hasEntitlement({
        account_ref_id: ACCOUNT,
        product_code: 'ai-assistant',
        entitlement_code: 'export',
      });
    } finally {
      await access.close();
    }
    expect(byAttributes(pointsOf(await metrics(), 'billing_sdk.access.lookups'))).toEqual({
      'billing_sdk.access.result=miss,billing_sdk.operation=accounts.status': 1,
      'billing_sdk.access.result=hit,billing_sdk.operation=accounts.status': 2,
      'billing_sdk.access.result=miss,billing_sdk.operation=entitlements.check': 1,
    });
    // The cache's requests are traced like any call.
    expect(calls().map((s) => s.name)).toEqual(['accounts.status', 'entitlements.check']);
  });

  it('counts gate decisions: allowed by source, refused by reason, never the account', async () => {
    const billing = client();
    const access = createAccessCache(billing);
    const gate = createGate({
      billing,
      access,
      account: (request) => request.headers.get('x-account') ?? undefined,
    });
    const ask = (account?: string) =>
      gate.check(new Request('http://app.test/', { headers: account ? { 'x-account': account } : {} }), {
        subscription: 'pro-plan',
      });
    try {
      await ask(ACCOUNT);
      await ask(ACCOUNT);
      await ask('acct_past_due');
      await ask();
    } finally {
      await access.close();
    }
    expect(byAttributes(pointsOf(await metrics(), 'billing_sdk.gate.decisions'))).toEqual({
      'billing_sdk.gate.source=live': 1,
      'billing_sdk.gate.source=cache': 1,
      'billing_sdk.gate.reason=inactive': 1,
      'billing_sdk.gate.reason=unauthenticated': 1,
    });
  });

  it("observes the tracker's queue depth as of its last step, and counts its steps", async () => {
    const steps: TrackerEvent[] = [];
    const onStep = (message: unknown) => steps.push(message as TrackerEvent);
    diagnostics.subscribe('billing-sdk:tracker', onStep);
    // Sends held for a while, one at a time: tracked events wait in the queue.
    mock.server.faults.add({ method: 'POST', path: '/api/usage/events/', delayMs: 200, times: Infinity });
    const tracker = createUsageTracker(client(), { concurrency: 1 });
    try {
      const meter = { account_ref_id: ACCOUNT, product_code: 'api-gateway', meter_code: 'api_calls' };
      for (let i = 0; i < 3; i++) await tracker.track({ ...meter, quantity: 1 });
      await until(() => tracker.stats().inFlight === 1);
      await tracker.track({ ...meter, quantity: 1 });
      const held = await metrics();
      expect(steps.at(-1)).toEqual({ event: 'queued', queued: 3, inFlight: 1 });
      expect(pointsOf(held, 'billing_sdk.tracker.queue_depth').map((p) => p.value)).toEqual([3]);
      expect(pointsOf(held, 'billing_sdk.tracker.in_flight').map((p) => p.value)).toEqual([1]);

      await tracker.flush();
      const drained = await metrics();
      expect(pointsOf(drained, 'billing_sdk.tracker.queue_depth').map((p) => p.value)).toEqual([0]);
      expect(byAttributes(pointsOf(drained, 'billing_sdk.tracker.events'))).toEqual({
        'billing_sdk.tracker.event=queued': 4,
        'billing_sdk.tracker.event=sent': 4,
      });
    } finally {
      diagnostics.unsubscribe('billing-sdk:tracker', onStep);
      await tracker.close();
    }
  });

  it('puts no account id, e-mail, API key or signing key in any span or metric', async () => {
    const billing = client();
    await billing.accounts.status({ account_ref_id: ACCOUNT });
    mock.server.faults.add({ path: '/api/invoices/', status: 503 });
    await billing.invoices.list({ email: EMAIL });
    await caught(() => billing.invoices.list({ account_ref_id: 'acct_nobody', email: EMAIL }));
    await billing.resolve.signedUrl(
      {
        account_ref_id: 'acct_new',
        subscription_name: 'pro-plan',
        tier_name: 'pro',
        email: 'new@example.com',
      },
      { signingKey: mock.server.signingKey },
    );
    const access = createAccessCache(billing);
    await access.isActive({ account_ref_id: ACCOUNT });
    await access.close();
    const tracker = createUsageTracker(billing);
    await tracker.track({
      account_ref_id: ACCOUNT,
      product_code: 'api-gateway',
      meter_code: 'api_calls',
      quantity: 1,
    });
    await tracker.close();

    const spans = exporter.getFinishedSpans();
    expect(new Set(calls().map((s) => s.name))).toEqual(
      new Set(['accounts.status', 'invoices.list', 'resolve.publicUrl', 'usage.record']),
    );
    const values: unknown[] = spans.flatMap((s) => [
      s.name,
      s.status,
      s.events,
      ...Object.entries(s.attributes).flat(),
    ]);
    for (const metric of await metrics()) {
      for (const point of metric.dataPoints)
        values.push(...Object.entries(point.attributes as Attributes).flat());
    }
    const published = JSON.stringify(values);
    expect(published).toContain('/api/account/{account_ref_id}/status/'); // it did look at the attributes
    for (const secret of [
      ACCOUNT,
      'acct_nobody',
      'acct_new',
      EMAIL,
      'new@example.com',
      mock.server.apiKey,
      mock.server.signingKey,
    ]) {
      expect(published).not.toContain(secret);
    }
  });

  it('the function it returns unsubscribes from every channel', async () => {
    stop();
    for (const name of ['billing-sdk:request', 'billing-sdk:attempt']) {
      expect(diagnostics.tracingChannel(name).hasSubscribers).toBe(false);
    }
    expect(diagnostics.hasSubscribers('billing-sdk:access')).toBe(false);
    expect(diagnostics.hasSubscribers('billing-sdk:tracker')).toBe(false);
    await client().accounts.status({ account_ref_id: ACCOUNT });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
