// OpenTelemetry traces and metrics for the SDK, from what it publishes on diagnostics_channel: no
// wrapper around the client, and only @opentelemetry/api here (the app brings its SDK and exporter).
// Run: node examples/opentelemetry.mjs (in-memory exporters, against the embedded mock).
//
// In an app, once at start, after its OpenTelemetry SDK is set up:
//   import { metrics, trace } from '@opentelemetry/api';
//   instrumentBillingSdk({ tracer: trace.getTracer('billing-sdk'), meter: metrics.getMeter('billing-sdk') });

import diagnostics from 'node:diagnostics_channel';
import { pathToFileURL } from 'node:url';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/** The buckets OpenTelemetry's HTTP conventions advise for `http.client.request.duration`, in s. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * The error's class name (`NotFoundError`), never its message: the SDK's messages name the path it
 * called, and paths hold account ids. Anything that does not look like a class name is `_OTHER`.
 */
function errorType(error, status) {
  const name = error instanceof Error ? error.name : undefined;
  if (typeof name === 'string' && /^[A-Za-z][\w.]{0,63}$/.test(name)) return name;
  return status >= 400 ? String(status) : '_OTHER';
}

/**
 * Subscribes to the SDK's four channels; returns the function that unsubscribes. Every attribute
 * comes from the channels' messages, which hold a route template (`/api/account/{account_ref_id}/status/`)
 * and never an id, an e-mail, a key or a query value.
 *
 * @param {{ tracer: import('@opentelemetry/api').Tracer, meter: import('@opentelemetry/api').Meter }} otel
 * @returns {() => void}
 */
export function instrumentBillingSdk({ tracer, meter }) {
  // Channel contexts are the keys: a call's context is its attempts' `request`.
  const spans = new WeakMap();
  const startedAt = new WeakMap();

  const duration = meter.createHistogram('http.client.request.duration', {
    description: 'Duration of HTTP client requests (one per attempt: retries count).',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const lookups = meter.createCounter('billing_sdk.access.lookups', {
    description: 'Access cache lookups by result: hit / (hit + miss + stale) is the hit ratio.',
    unit: '{lookup}',
  });
  const accessErrors = meter.createCounter('billing_sdk.access.errors', {
    description: 'Failed refreshes and shared-store failures of the access cache.',
    unit: '{error}',
  });
  const decisions = meter.createCounter('billing_sdk.gate.decisions', {
    description: 'Gate decisions (createGate): allowed by source, refused by reason.',
    unit: '{decision}',
  });
  const trackerSteps = meter.createCounter('billing_sdk.tracker.events', {
    description: 'Usage tracker steps: queued, sent, retry, dead-letter.',
    unit: '{event}',
  });
  // Gauges of the last step's numbers: a step is told with the queue as it is after it.
  const queueDepth = meter.createObservableGauge('billing_sdk.tracker.queue_depth', {
    description: 'Usage events waiting to be sent (not counting those in flight), as of the last step.',
    unit: '{event}',
  });
  const inFlight = meter.createObservableGauge('billing_sdk.tracker.in_flight', {
    description: 'Usage events being sent, as of the last tracker step.',
    unit: '{event}',
  });
  let lastStep;
  const observeQueue = (result) => {
    if (lastStep) result.observe(lastStep.queued);
  };
  const observeInFlight = (result) => {
    if (lastStep) result.observe(lastStep.inFlight);
  };
  queueDepth.addCallback(observeQueue);
  inFlight.addCallback(observeInFlight);

  /** Ends a trace's span once (a promise's failure reaches `error` then `asyncEnd`). */
  const finish = (ctx, span, attributes) => {
    if (!spans.delete(ctx)) return;
    if (ctx.status !== undefined) attributes['http.response.status_code'] = ctx.status;
    if (ctx.error !== undefined) {
      attributes['error.type'] = errorType(ctx.error, ctx.status);
      // No description, and no recordException: both would carry the message, hence the path.
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.setAttributes(attributes);
    span.end();
  };

  // A call spans its retries and waits, so it is INTERNAL: each attempt is the CLIENT span, as
  // OpenTelemetry's HTTP conventions ask (one per resend), and backends that count CLIENT spans as
  // outgoing requests count each request once.
  const request = {
    start(ctx) {
      const span = tracer.startSpan(
        ctx.operation,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'billing_sdk.operation': ctx.operation,
            'http.request.method': ctx.method,
            'url.template': ctx.route,
            'server.address': ctx.serverAddress,
            'server.port': ctx.serverPort,
          },
        },
        context.active(),
      );
      spans.set(ctx, span);
    },
    error(ctx) {
      request.asyncEnd(ctx);
    },
    asyncEnd(ctx) {
      const span = spans.get(ctx);
      // attempt is 0 when the call ended before its first attempt (aborted, say).
      if (span) finish(ctx, span, { 'billing_sdk.retry_count': Math.max(0, ctx.attempt - 1) });
    },
  };

  const attempt = {
    start(ctx) {
      const call = ctx.request;
      const parent = spans.get(call);
      const attributes = {
        'http.request.method': ctx.method,
        'url.template': ctx.route,
        'server.address': call.serverAddress,
        'server.port': call.serverPort,
      };
      if (ctx.attempt > 1) attributes['http.request.resend_count'] = ctx.attempt - 1;
      const span = tracer.startSpan(
        `${ctx.method} ${ctx.route}`,
        { kind: SpanKind.CLIENT, attributes },
        parent ? trace.setSpan(context.active(), parent) : context.active(),
      );
      spans.set(ctx, span);
      startedAt.set(ctx, performance.now());
    },
    error(ctx) {
      attempt.asyncEnd(ctx);
    },
    asyncEnd(ctx) {
      const span = spans.get(ctx);
      if (!span) return;
      const metric = {
        'http.request.method': ctx.method,
        'url.template': ctx.route,
        'server.address': ctx.request.serverAddress,
        'server.port': ctx.request.serverPort,
      };
      if (ctx.status !== undefined) metric['http.response.status_code'] = ctx.status;
      if (ctx.error !== undefined) metric['error.type'] = errorType(ctx.error, ctx.status);
      duration.record((performance.now() - startedAt.get(ctx)) / 1000, metric);
      // The request id is kept, on the span only: the server makes it up (random, no user data) and
      // support finds the request by it. As a metric attribute it would make one series per request.
      const attributes = ctx.requestId ? { 'http.response.header.x-request-id': [ctx.requestId] } : {};
      finish(ctx, span, attributes);
    },
  };

  const onAccess = (event) => {
    const operation = event.operation ? { 'billing_sdk.operation': event.operation } : {};
    if (event.event === 'hit' || event.event === 'miss' || event.event === 'stale') {
      lookups.add(1, { 'billing_sdk.access.result': event.event, ...operation });
    } else if (event.event === 'error') {
      accessErrors.add(1, operation);
    } else if (event.event === 'decision') {
      // A route's gate: never the account, only why and from where.
      decisions.add(
        1,
        event.allowed
          ? { 'billing_sdk.gate.source': event.source }
          : { 'billing_sdk.gate.reason': event.reason },
      );
    }
  };
  const onTracker = (event) => {
    lastStep = event;
    trackerSteps.add(1, { 'billing_sdk.tracker.event': event.event });
  };

  const requestChannel = diagnostics.tracingChannel('billing-sdk:request');
  const attemptChannel = diagnostics.tracingChannel('billing-sdk:attempt');
  requestChannel.subscribe(request);
  attemptChannel.subscribe(attempt);
  diagnostics.subscribe('billing-sdk:access', onAccess);
  diagnostics.subscribe('billing-sdk:tracker', onTracker);
  return () => {
    requestChannel.unsubscribe(request);
    attemptChannel.unsubscribe(attempt);
    diagnostics.unsubscribe('billing-sdk:access', onAccess);
    diagnostics.unsubscribe('billing-sdk:tracker', onTracker);
    queueDepth.removeCallback(observeQueue);
    inFlight.removeCallback(observeInFlight);
  };
}

/** `key=value` pairs for the printout, but for `skip` (what the line shows already, or every line has). */
const pairs = (attributes, skip = []) =>
  Object.entries(attributes)
    .filter(([key]) => !key.startsWith('server.') && !skip.includes(key))
    .map(([key, value]) => ` ${key}=${Array.isArray(value) ? value.join(',') : value}`)
    .join('');

/** `GET /api/invoices/ [CLIENT ERROR]`, then the attributes. */
const describeSpan = (span, skip) =>
  `${span.name} [${SpanKind[span.kind]} ${span.status.code === SpanStatusCode.ERROR ? 'ERROR' : 'OK'}]${pairs(span.attributes, skip)}`;

/** The demo: in-memory exporters where an app would export over OTLP. */
async function main() {
  // Loaded here, not at the top: importing instrumentBillingSdk needs nothing but the API.
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import(
    '@opentelemetry/sdk-trace-base'
  );
  const { InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } =
    await import('@opentelemetry/sdk-metrics');
  const { BillingClient, createAccessCache, createUsageTracker, NotFoundError } = await import('billing-sdk');
  const { startMockServer } = await import('billing-sdk/testing');

  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 60_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const stop = instrumentBillingSdk({
    tracer: tracerProvider.getTracer('billing-sdk-example'),
    meter: meterProvider.getMeter('billing-sdk-example'),
  });

  const server = await startMockServer();
  // Short retry waits, so the demo does not sit through a backoff.
  const billing = new BillingClient({ apiKey: server.apiKey, baseUrl: server.baseUrl, retryDelay: () => 10 });
  try {
    await billing.accounts.status({ account_ref_id: 'acct_active' });
    server.faults.add({ path: '/api/invoices/', status: 503 });
    await billing.invoices.list({ account_ref_id: 'acct_active' });
    try {
      await billing.accounts.status({ account_ref_id: 'acct_nobody' });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }

    console.log(`spans (server.address and server.port on each: ${new URL(server.baseUrl).host}):`);
    const finished = spanExporter.getFinishedSpans();
    for (const call of finished.filter((s) => !s.parentSpanContext)) {
      console.log(describeSpan(call, ['billing_sdk.operation']));
      for (const span of finished.filter((s) => s.parentSpanContext?.spanId === call.spanContext().spanId)) {
        console.log(`  ${describeSpan(span, ['http.request.method', 'url.template'])}`);
      }
    }
    spanExporter.reset();

    // The access cache and the usage tracker: their calls are traced too, their own steps counted.
    const access = createAccessCache(billing);
    const gate = { account_ref_id: 'acct_active', product_code: 'ai-assistant', entitlement_code: 'export' };
    for (let i = 0; i < 3; i++) {
      await access.isActive({ account_ref_id: 'acct_active' });
      await access.hasEntitlement(gate);
    }
    await access.close();
    const tracker = createUsageTracker(billing);
    const meter = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
    for (let i = 0; i < 3; i++) await tracker.track({ ...meter, quantity: 1 });
    await tracker.close();
    const calls = spanExporter.getFinishedSpans().filter((s) => !s.parentSpanContext);
    console.log(`then ${calls.length} more calls: ${[...new Set(calls.map((s) => s.name))].join(', ')}`);

    await reader.forceFlush();
    const exported = metricExporter.getMetrics().at(-1);
    console.log('metrics:');
    for (const metric of exported?.scopeMetrics.flatMap((s) => s.metrics) ?? []) {
      for (const point of metric.dataPoints) {
        const value = typeof point.value === 'number' ? point.value : `count=${point.value.count}`;
        console.log(`${metric.descriptor.name} ${value}${pairs(point.attributes)}`);
      }
    }
  } finally {
    stop();
    await server.close();
    await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
