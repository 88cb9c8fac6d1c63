/**
 * The part of `node:diagnostics_channel` the SDK uses: the platform modules hand one out (or none),
 * util/diagnostics.ts publishes through it.
 */

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
