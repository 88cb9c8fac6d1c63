import diagnostics from 'node:diagnostics_channel';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { BillingClient, type ClientOptions, type Logger } from '../src/index.js';
import { type MockServer, type MockServerOptions, startMockServer } from '../src/testing/index.js';
import { type Clock, withTestClock } from '../src/util/clock.js';

/** A mock server on an ephemeral loopback port. */
export async function startMock(options?: MockServerOptions): Promise<MockServer> {
  return startMockServer(options);
}

/**
 * One mock server for the file: started before the first test, closed after the last, and reset
 * (seed, faults, request log) before each test so tests cannot see each other's changes.
 */
export function useMockServer(options?: MockServerOptions): { readonly server: MockServer } {
  const ref = {} as { server: MockServer };
  beforeAll(async () => {
    ref.server = await startMockServer(options);
  });
  afterAll(() => ref.server.close());
  beforeEach(() => ref.server.reset());
  return ref;
}

/**
 * A clock whose waits end at once, moving its own time forward by the wait (so a cooldown that waits
 * until a moment does pass); `waits` lists every wait the SDK scheduled, in ms.
 */
export function instantClock(): Clock & { waits: number[] } {
  const waits: number[] = [];
  let skipped = 0;
  return {
    waits,
    now: () => Date.now() + skipped,
    sleep(ms, signal, onAbort) {
      waits.push(ms);
      skipped += Math.max(0, ms);
      return signal?.aborted ? Promise.reject(onAbort()) : Promise.resolve();
    },
  };
}

/** A clock whose waits last until the caller's signal aborts them: for testing cancellation mid-wait. */
export function heldClock(): Clock & { waits: number[]; waiting: Promise<void> } {
  const waits: number[] = [];
  let started: () => void = () => {};
  const waiting = new Promise<void>((resolve) => {
    started = resolve;
  });
  return {
    waits,
    waiting,
    now: () => Date.now(),
    sleep(ms, signal, onAbort) {
      waits.push(ms);
      started();
      return new Promise((_, reject) =>
        signal?.addEventListener('abort', () => reject(onAbort()), { once: true }),
      );
    },
  };
}

/** Client options with the clock replaced (through the internal seam, not a public option). */
export function withClock(options: ClientOptions, clock: Clock): ClientOptions {
  return withTestClock(options, clock);
}

/**
 * The engine under ky that tests run on: `BILLING_TEST_ENGINE=fetch` runs them on the global fetch
 * (what Deno, Bun, browsers and workers use); by default they run on the SDK's default, in Node
 * undici's dispatcher API. CI runs the core's tests both ways.
 */
export const TEST_ENGINE: 'default' | 'fetch' =
  process.env.BILLING_TEST_ENGINE === 'fetch' ? 'fetch' : 'default';

/**
 * A client pointed at `server`, quiet unless a test asks for logs. Its retry waits end at once
 * (pass a clock to see them): no test sits through a backoff.
 */
export function clientFor(
  server: MockServer,
  options: ClientOptions = {},
  clock: Clock = instantClock(),
): BillingClient {
  const engine: ClientOptions =
    TEST_ENGINE === 'fetch' && !options.dispatcher
      ? { fetch: (input, init) => globalThis.fetch(input, init) }
      : {};
  return new BillingClient(
    withClock(
      { apiKey: server.apiKey, baseUrl: server.baseUrl, logLevel: 'off', ...engine, ...options },
      clock,
    ),
  );
}

/** A logger that records every line, for asserting what the SDK logs. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const record =
    (level: string) =>
    (message: string, ...rest: unknown[]) =>
      lines.push(`${level} ${message} ${rest.map((r) => JSON.stringify(r)).join(' ')}`);
  return {
    lines,
    error: record('error'),
    warn: record('warn'),
    info: record('info'),
    debug: record('debug'),
  };
}

/** Runs `fn` and returns the error it throws or rejects with; fails when it does not. */
export async function caught(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error, none was thrown');
}

/** A loopback HTTP server; `url` is its origin, `close()` ends it and its connections. */
export interface LoopbackServer {
  url: string;
  close(): Promise<void>;
}

/** Serves a Node `(req, res)` listener on 127.0.0.1 with an ephemeral port. */
export async function serveNode(listener: RequestListener): Promise<LoopbackServer> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serves a Fetch API handler (`Request` → `Response`) over real HTTP on loopback. */
export function serveFetch(handler: (request: Request) => Promise<Response>): Promise<LoopbackServer> {
  return serveNode(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
    const response = await handler(
      new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
}

/** Polls `condition` every 5 ms until it holds; fails after `ms`. For events another process causes. */
export async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A full garbage collection, without starting Node with --expose-gc. For tests of what must survive
 * one: a `Request` built with a signal stops following it once the Request is collected
 * (nodejs/undici#3644, #4068).
 */
export async function collectGarbage(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** One event of the SDK's tracing channels, in the order published, with a copy of its context. */
export interface TraceEvent {
  channel: 'billing-sdk:request' | 'billing-sdk:attempt';
  event: 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error';
  /** The trace's context as it was at this event (its request and result left out). */
  context: Record<string, unknown>;
}

/**
 * Records the events of `billing-sdk:request` and `billing-sdk:attempt` until `stop()` (the SDK
 * traces while anyone listens). For checks of what the SDK publishes, and for checks that read the
 * order of what it did rather than pausing: a request the cooldown holds starts no attempt; a walk
 * that stopped starts no request.
 */
export function recordTraces(): {
  events: TraceEvent[];
  count(channel: TraceEvent['channel'], event: TraceEvent['event']): number;
  stop(): void;
} {
  const events: TraceEvent[] = [];
  const stops: (() => void)[] = [];
  for (const channel of ['billing-sdk:request', 'billing-sdk:attempt'] as const) {
    const traced = diagnostics.tracingChannel(channel);
    const on = (event: TraceEvent['event']) => (context: object) => {
      const { request: _request, result: _result, ...rest } = context as Record<string, unknown>;
      events.push({ channel, event, context: rest });
    };
    const handlers = {
      start: on('start'),
      end: on('end'),
      asyncStart: on('asyncStart'),
      asyncEnd: on('asyncEnd'),
      error: on('error'),
    };
    traced.subscribe(handlers);
    stops.push(() => traced.unsubscribe(handlers));
  }
  return {
    events,
    count: (channel, event) => events.filter((e) => e.channel === channel && e.event === event).length,
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}
