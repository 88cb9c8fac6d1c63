import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** One webhook POST as the receiver saw it. */
export interface Received {
  method: string;
  headers: IncomingHttpHeaders;
  /** Raw body, to compare retries byte for byte. */
  text: string;
  /** Parsed JSON body. */
  body: Record<string, unknown>;
  /** `performance.now()` on arrival, to check the retry schedule. */
  at: number;
}

/** How the receiver answers one request; `'hang'` never answers (the sender's timeout runs out). */
export type Reply = { status: number; body: string } | 'hang';

/** The contract's acknowledgement. */
export const ACK: Reply = { status: 200, body: '{"received": true}' };

/** A webhook receiver under the test's control. */
export interface Receiver {
  url: string;
  /** Requests received, oldest first. */
  received: Received[];
  /** Replies for the next requests, in order; once they run out every request gets {@link ACK}. */
  script(...replies: Reply[]): void;
  /** Forgets requests and the script. */
  clear(): void;
  close(): Promise<void>;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/billing`);
    });
  });
}

/** A plain `node:http` receiver on an ephemeral loopback port. */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let replies: Reply[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: req.method ?? '',
        headers: req.headers,
        text,
        body: JSON.parse(text) as Record<string, unknown>,
        at: performance.now(),
      });
      const reply = replies.shift() ?? ACK;
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    });
  });
  const url = await listen(server);
  return {
    url,
    received,
    script(...next) {
      replies = next;
    },
    clear() {
      received.length = 0;
      replies = [];
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** One receiver for the file, cleared before each test (like `useMockServer` for the mock). */
export function useReceiver(): { readonly receiver: Receiver } {
  const ref = {} as { receiver: Receiver };
  beforeAll(async () => {
    ref.receiver = await startReceiver();
  });
  afterAll(() => ref.receiver.close());
  beforeEach(() => ref.receiver.clear());
  return ref;
}

/** A loopback URL where nothing listens any more: every POST fails to connect. */
export async function closedUrl(): Promise<string> {
  const receiver = await startReceiver();
  await receiver.close();
  return receiver.url;
}
