import { diagnosticsModule } from '../platform/server.js';

/** What the SDK uses of a `node:diagnostics_channel` channel. */
export interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
  /** Publishes, then runs `fn` inside the stores bound to the channel (a tracer's active span). */
  runStores?<T>(message: unknown, fn: () => T): T;
}

/** What the SDK uses of a `TracingChannel`. */
export interface TracingChannel {
  /** Missing before Node 20.13: {@link isTraced} falls back to the sub-channels. */
  readonly hasSubscribers?: boolean | undefined;
  readonly start: Channel;
  readonly end: Channel;
  readonly asyncStart: Channel;
  readonly asyncEnd: Channel;
  readonly error: Channel;
}

/** What the SDK uses of `node:diagnostics_channel`. */
export interface DiagnosticsModule {
  channel(name: string): Channel;
  tracingChannel?(name: string): TracingChannel;
}

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
 * Publishes the message `make` builds, only when someone listens (so an unobserved step builds
 * nothing). A runtime whose `publish` lets a subscriber's error through would otherwise turn it
 * into the caller's: it is dropped here (Node itself reports it as an uncaught exception).
 */
export function publish(ch: Channel | undefined, make: () => object): void {
  if (!ch?.hasSubscribers) return;
  try {
    ch.publish(make());
  } catch {
    // A subscriber's failure is not the SDK's result.
  }
}

/**
 * Runs `fn` as Node's `TracingChannel.tracePromise` does (start with the bound stores, end, then
 * asyncStart/asyncEnd, error on failure, `result` or `error` set on the context), but with every
 * publish guarded: workerd's `publish` throws a subscriber's error back at the publisher, where it
 * would fail a call that the server answered (Node, Deno and Bun report it as uncaught instead).
 */
export function traced<T>(
  tc: TracingChannel,
  context: { result?: unknown; error?: unknown },
  fn: () => Promise<T>,
): Promise<T> {
  const tell = (ch: Channel) => {
    try {
      ch.publish(context);
    } catch {
      // A subscriber's failure is not the call's.
    }
  };
  let running: Promise<T> | undefined;
  const run = () => {
    running = fn();
    return running;
  };
  try {
    if (tc.start.runStores) tc.start.runStores(context, run);
    else {
      tell(tc.start);
      run();
    }
  } catch {
    // A subscriber threw from start before the call began: the call runs all the same.
  }
  const promise = running ?? fn();
  tell(tc.end);
  return promise.then(
    (result) => {
      context.result = result;
      tell(tc.asyncStart);
      tell(tc.asyncEnd);
      return result;
    },
    (error: unknown) => {
      context.error = error;
      tell(tc.error);
      tell(tc.asyncStart);
      tell(tc.asyncEnd);
      throw error;
    },
  );
}
