import { diagnosticsModule } from '../platform/server.js';

/** What the SDK uses of a `node:diagnostics_channel` channel. */
export interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
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
  tracePromise<T>(fn: () => Promise<T>, context: object): Promise<T>;
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
