import type { Channel, DiagnosticsModule, TracingChannel } from '../platform/diagnostics-module.js';
import { diagnosticsModule } from '../platform/server.js';

/** The runtime's module, or `undefined` where there is none (browsers): every channel is then absent. */
const diagnostics: DiagnosticsModule | undefined = diagnosticsModule();

/** The named channel, or `undefined` where the runtime has none. */
export function channel(name: string): Channel | undefined {
  return diagnostics?.channel(name);
}

/** The named tracing channel, or `undefined` where the runtime has none. */
export function tracingChannel(name: string): TracingChannel | undefined {
  return diagnostics?.tracingChannel?.(name);
}

/** Whether anyone listens on `tc`: checked once per call, so an unobserved call builds no context. */
export function isTraced(tc: TracingChannel | undefined): tc is TracingChannel {
  if (!tc) return false;
  if (typeof tc.hasSubscribers === 'boolean') return tc.hasSubscribers;
  return (
    tc.start.hasSubscribers ||
    tc.end.hasSubscribers ||
    tc.asyncStart.hasSubscribers ||
    tc.asyncEnd.hasSubscribers ||
    tc.error.hasSubscribers
  );
}

/**
 * Publishes `message`. A runtime whose `publish` lets a subscriber's error through (workerd throws
 * it back at the publisher) would otherwise turn it into the caller's: it is dropped here (Node,
 * Deno and Bun report it as an uncaught exception themselves).
 */
function tell(ch: Channel, message: unknown): void {
  try {
    ch.publish(message);
  } catch {
    // A subscriber's failure is not the SDK's result.
  }
}

/** Publishes the message `make` builds, only when someone listens (an unobserved step builds nothing). */
export function publish(ch: Channel | undefined, make: () => object): void {
  if (ch?.hasSubscribers) tell(ch, make());
}

/**
 * Runs `fn` as Node's `TracingChannel.tracePromise` does (start with the bound stores, end, then
 * asyncStart/asyncEnd, error on failure, `result` or `error` set on the context), with every
 * publish through {@link tell}: in workerd a subscriber's error would otherwise fail a call the
 * server had answered.
 */
export function traced<T>(
  tc: TracingChannel,
  context: { result?: unknown; error?: unknown },
  fn: () => Promise<T>,
): Promise<T> {
  let running: Promise<T> | undefined;
  try {
    if (tc.start.runStores) tc.start.runStores(context, () => (running = fn()));
    else tell(tc.start, context);
  } catch {
    // A subscriber threw from start before the call began: the call runs all the same.
  }
  const promise = running ?? fn();
  tell(tc.end, context);
  const settled = (key: 'result' | 'error', value: unknown) => {
    context[key] = value;
    if (key === 'error') tell(tc.error, context);
    tell(tc.asyncStart, context);
    tell(tc.asyncEnd, context);
  };
  return promise.then(
    (result) => {
      settled('result', result);
      return result;
    },
    (error: unknown) => {
      settled('error', error);
      throw error;
    },
  );
}
