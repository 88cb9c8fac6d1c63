/**
 * What operators see of the request path: the `billing-sdk:request` and `billing-sdk:attempt`
 * tracing channels (see core/diagnostics.ts) and the log lines of attempts and retries. Nothing is
 * built unless someone listens: a subscriber for a trace, the log level for a line.
 *
 * @module
 */
import type { AttemptTrace, RequestTrace } from '../core/diagnostics.js';
import type { RequestContext } from '../core/errors/index.js';
import type { SdkLogger } from '../core/logger.js';
import type { Clock } from '../util/clock.js';
import { isTraced, traced, tracingChannel } from '../util/diagnostics.js';
import { requestIdOf } from '../util/redact.js';
import type { Exchange } from './classify.js';
import type { ResolvedOptions } from './options.js';

/** The SDK's tracing channels; `undefined` where the runtime has none. */
const requestTracing = tracingChannel('billing-sdk:request');
const attemptTracing = tracingChannel('billing-sdk:attempt');

/** What a trace names of a call: its SDK method and HTTP method (an endpoint has both). */
type Operation = Pick<RequestTrace, 'operation' | 'method'>;
/** Where the client sends its calls, as a trace names it. */
type Server = Pick<ResolvedOptions, 'basePath' | 'serverAddress' | 'serverPort'>;

/**
 * Runs `send` observed: with the call's trace when anyone listens on either channel (checked once
 * per call: an unobserved call builds no trace), on the `billing-sdk:request` tracing channel when
 * that has a subscriber. Attempts point at their call's trace even when only attempts are listened to.
 */
export function traceCall<T>(
  operation: Operation,
  route: string,
  server: Server,
  send: (trace: RequestTrace | undefined) => Promise<T>,
): Promise<T> {
  if (!isTraced(requestTracing) && !isTraced(attemptTracing)) return send(undefined);
  const trace = requestTrace(operation, route, server);
  return isTraced(requestTracing) ? traced(requestTracing, trace, () => send(trace)) : send(trace);
}

/** The context of a traced call: what the call is, never a value it carries. */
function requestTrace({ operation, method }: Operation, route: string, server: Server): RequestTrace {
  return {
    operation,
    method,
    route: server.basePath + route,
    serverAddress: server.serverAddress,
    serverPort: server.serverPort,
    attempt: 0,
  };
}

/**
 * One attempt on the `billing-sdk:attempt` tracing channel; its outcome (status, request id, the
 * server's Retry-After) is noted on the attempt's context and on the call's before the channel's
 * end events. Published only while the attempt channel has a subscriber; noted on the call always.
 */
export function traceAttempt(
  request: RequestTrace,
  n: number,
  run: () => Promise<Exchange>,
): Promise<Exchange> {
  const trace: AttemptTrace = {
    request,
    operation: request.operation,
    method: request.method,
    route: request.route,
    attempt: n,
  };
  request.attempt = n;
  const note = (status: number | undefined, requestId: string | undefined, retryAfterMs?: number) => {
    trace.status = request.status = status;
    trace.requestId = request.requestId = requestId;
    trace.retryAfterMs = request.retryAfterMs = retryAfterMs;
  };
  const noted = async () => {
    try {
      const exchange = await run();
      note(exchange.status, requestIdOf(exchange.headers));
      return exchange;
    } catch (error) {
      const failed = error as { status?: number; requestId?: string; retryAfterMs?: number };
      note(failed.status, failed.requestId, failed.retryAfterMs);
      throw error;
    }
  };
  return isTraced(attemptTracing) ? traced(attemptTracing, trace, noted) : noted();
}

/**
 * The debug line of one attempt: `GET /api/invoices/ → 200 in 12 ms (attempt 1 of 3, request req_…)`,
 * or the error's name when there was no usable answer. Only built when debug logging is on.
 */
export async function logAttempt(
  logger: SdkLogger,
  clock: Clock,
  attempt: Promise<Exchange>,
  context: RequestContext,
  n: number,
  of: number,
): Promise<Exchange> {
  const started = clock.now();
  let outcome: unknown;
  let requestId: string | undefined;
  try {
    const exchange = await attempt;
    outcome = exchange.status;
    requestId = requestIdOf(exchange.headers);
    return exchange;
  } catch (error) {
    const failed = error as { status?: number; requestId?: string; name?: string };
    outcome = failed.status ?? failed.name;
    requestId = failed.requestId;
    throw error;
  } finally {
    logger.log(
      'debug',
      `${context.method} ${context.path} → ${outcome} in ${clock.now() - started} ms (attempt ${n} of ${of}${requestId ? `, request ${requestId}` : ''})`,
    );
  }
}

/** The info line of a retry about to wait: what failed, and how long until the next attempt. */
export function logRetry(
  logger: SdkLogger,
  context: RequestContext,
  error: unknown,
  delayMs: number,
  attempt: number,
  maxRetries: number,
): void {
  if (!logger.enabled('info')) return;
  const { name, message } = error as Error;
  logger.log(
    'info',
    `retrying ${context.method} ${context.path} in ${delayMs} ms (retry ${attempt} of ${maxRetries}) after ${name}: ${message}`,
  );
}
