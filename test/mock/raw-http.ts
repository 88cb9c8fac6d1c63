import { type Agent, type IncomingHttpHeaders, request } from 'node:http';

/** What a raw request ended with, classified the way a client's request core must tell them apart. */
export type RawOutcome =
  /** A complete answer; `body` is the bytes on the wire (not decompressed). */
  | { kind: 'answer'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  /** The connection dropped before the head arrived. */
  | { kind: 'reset'; error: Error }
  /** The deadline passed; `headers`/`status` are set when the head had arrived, `body` is what came. */
  | { kind: 'timeout'; status?: number; headers?: IncomingHttpHeaders; body: Buffer };

/** Options of {@link rawRequest}. */
export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Default: a fresh connection that closes after the answer. */
  agent?: Agent;
  /** Whole-request deadline; on expiry the request and its socket are destroyed. Default 5000. */
  timeoutMs?: number;
  /** Called once the head has arrived, e.g. to sample the server's open connections meanwhile. */
  onHead?: (status: number, headers: IncomingHttpHeaders) => void;
}

/**
 * One request with `node:http`, which (unlike fetch) shows the bytes on the wire: no
 * decompression, the real `content-length` / `transfer-encoding`, partial bodies on a timeout.
 */
export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let head: { status: number; headers: IncomingHttpHeaders } | undefined;
    let settled = false;
    const settle = (outcome: RawOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = request(url, {
      method: options.method ?? 'GET',
      headers: options.headers,
      agent: options.agent ?? false,
    });
    const timer = setTimeout(() => {
      settle({ kind: 'timeout', ...head, body: Buffer.concat(chunks) });
      req.destroy();
    }, options.timeoutMs ?? 5000);
    req.on('response', (res) => {
      head = { status: res.statusCode ?? 0, headers: res.headers };
      options.onHead?.(head.status, head.headers);
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => settle({ kind: 'answer', ...head!, body: Buffer.concat(chunks) }));
      // Destroyed by the deadline (settled already) or dropped mid-body: only the former is expected.
      res.on('error', (error) => settle({ kind: 'reset', error }));
    });
    req.on('error', (error) => settle({ kind: 'reset', error }));
    req.end(options.body);
  });
}

/** Polls until `predicate` holds; fails with `message` after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, message: string, timeoutMs = 2000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Resolves after `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
