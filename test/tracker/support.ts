import { request as httpRequest } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { UsageTrackerOptions } from '../../src/index.js';
import { memorySpool } from '../../src/tracker/memory-spool.js';
import type { Spool } from '../../src/tracker/spool.js';
import { type Clock, withTestClock } from '../../src/util/clock.js';
import { type LoopbackServer, serveNode } from '../helpers.js';

/** The demo seed's postpaid meter: usage events there are recorded. */
export const METER = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
/** The demo seed's prepaid meter: a usage event there is refused (`invalid_usage_model`), a dead letter. */
export const PREPAID = { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' };

/** Tracker options with the clock replaced (through the client's internal seam, not a public option). */
export function withTrackerClock(options: UsageTrackerOptions, clock: Clock): UsageTrackerOptions {
  return withTestClock(options, clock);
}

/**
 * A clock that moves only when the test says: waits end when `advance` passes their time, or at
 * once when their signal aborts. `waits` lists every wait scheduled, in ms; `sleeping` how many
 * are under way. Tests never sit through a real backoff, and can look at the tracker mid-outage.
 * `step` moves the wall clock alone (an NTP step, a resumed VM): waits and `monotonic()` run on.
 */
export function manualClock(): Clock & {
  waits: number[];
  sleeping(): number;
  advance(ms: number): void;
  step(ms: number): void;
  monotonic(): number;
} {
  let elapsed = 0;
  let wall = 1_700_000_000_000;
  const waits: number[] = [];
  const sleepers = new Set<{ until: number; resolve: () => void }>();
  return {
    waits,
    now: () => wall + elapsed,
    monotonic: () => elapsed,
    sleeping: () => sleepers.size,
    sleep(ms, signal, onAbort) {
      if (signal?.aborted) return Promise.reject(onAbort());
      waits.push(ms);
      return new Promise<void>((resolve, reject) => {
        const sleeper = {
          until: elapsed + ms,
          resolve: () => {
            signal?.removeEventListener('abort', abort);
            resolve();
          },
        };
        const abort = () => {
          sleepers.delete(sleeper);
          reject(onAbort());
        };
        sleepers.add(sleeper);
        signal?.addEventListener('abort', abort, { once: true });
      });
    },
    advance(ms) {
      elapsed += ms;
      for (const sleeper of [...sleepers]) {
        if (sleeper.until <= elapsed) {
          sleepers.delete(sleeper);
          sleeper.resolve();
        }
      }
    },
    step(ms) {
      wall += ms;
    },
  };
}

/** Counts of calls a {@link spySpool} received. */
export interface SpoolCalls {
  open: number;
  append: number;
  take: number;
  ack: number;
  replace: number;
  pending: number;
  close: number;
  /** Every call in order, with its main argument's size or the aggregate's key. */
  log: string[];
}

/** A memory spool (or `inner`) that counts what it is asked: to prove nothing was queued. */
export function spySpool(inner: Spool = memorySpool()): Spool & { calls: SpoolCalls } {
  const calls: SpoolCalls = {
    open: 0,
    append: 0,
    take: 0,
    ack: 0,
    replace: 0,
    pending: 0,
    close: 0,
    log: [],
  };
  return {
    calls,
    durable: inner.durable,
    open: () => {
      calls.open++;
      calls.log.push('open');
      return inner.open();
    },
    append: (events) => {
      calls.append++;
      calls.log.push(`append ${events.map((e) => e.event_key).join(',')}`);
      return inner.append(events);
    },
    take: (max) => {
      calls.take++;
      return inner.take(max);
    },
    ack: (ids) => {
      calls.ack++;
      calls.log.push(`ack ${ids.join(',')}`);
      return inner.ack(ids);
    },
    replace: async (members, aggregate) => {
      calls.replace++;
      const id = await inner.replace(members, aggregate);
      calls.log.push(`replace ${members.length} by ${aggregate.event_key}`);
      return id;
    },
    pending: (ids) => {
      calls.pending++;
      return inner.pending(ids);
    },
    close: () => {
      calls.close++;
      calls.log.push('close');
      return inner.close();
    },
  };
}

/**
 * A TCP proxy in front of the mock that can go down: while down, nothing listens on its port, so a
 * connection is refused (ECONNREFUSED), as when the service's host is up but its process is not.
 */
export async function refusingProxy(target: string): Promise<{
  url: string;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}> {
  const { hostname, port: targetPort } = new URL(target);
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  let server: Server | undefined;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const listening = createServer((client) => {
        const upstream = connect(Number(targetPort), hostname);
        track(client);
        track(upstream);
        client.pipe(upstream).pipe(client);
      });
      server = listening;
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => {
        resolve((listening.address() as { port: number }).port);
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
    });
  const port = await listen(0);
  return {
    url: `http://127.0.0.1:${port}`,
    down: stop,
    up: async () => {
      await listen(port);
    },
    close: stop,
  };
}

/**
 * An HTTP server in front of the mock that refuses the usage events whose `event_key` was poisoned,
 * with the status given (a 5xx, 401, 403 or 409 for that event alone), and passes every other
 * request on as it is. `refused` counts each poisoned key's refusals.
 */
export async function poisonProxy(target: string): Promise<
  LoopbackServer & {
    poison(eventKey: string, status: number): void;
    refused: Map<string, number>;
  }
> {
  const poisoned = new Map<string, number>();
  const refused = new Map<string, number>();
  const { hostname, port } = new URL(target);
  const server = await serveNode(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (req.method === 'POST' && req.url?.includes('/usage/events')) {
      const key = (JSON.parse(body.toString() || '{}') as { event_key?: string }).event_key ?? '';
      const status = poisoned.get(key);
      if (status !== undefined) {
        refused.set(key, (refused.get(key) ?? 0) + 1);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: `refused ${key}` }));
        return;
      }
    }
    const upstream = httpRequest(
      { hostname, port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });
  return { ...server, poison: (eventKey, status) => void poisoned.set(eventKey, status), refused };
}
