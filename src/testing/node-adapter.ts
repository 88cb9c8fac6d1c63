import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Connection, Dispatch } from './dispatch.js';
import { isStreamed } from './stall.js';

/**
 * A minimal bridge from `node:http` to the fetch-style dispatcher. Written here rather than
 * taken from @hono/node-server because that package imports bare Node built-ins (`http`,
 * `crypto`) that the package's platform-neutral bundle cannot resolve, and because a reset
 * fault needs the socket itself.
 */

function readBody(incoming: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    incoming.on('error', reject);
  });
}

/** A request whose Host header or target makes no URL: answered 400. */
class BadHost extends Error {}

async function toRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal): Promise<Request> {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] ?? '', raw[i + 1] ?? '');
  const host = incoming.headers.host;
  let url: URL;
  try {
    url = new URL(incoming.url ?? '/', host ? `http://${host}` : origin);
  } catch {
    // A Host header (or target) no URL can be made of (`a b`) is the client's fault, not the server's.
    throw new BadHost();
  }
  const method = incoming.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? undefined : await readBody(incoming);
  return new Request(url, { method, headers, signal, ...(body && body.length > 0 ? { body } : {}) });
}

function writeHead(response: Response, outgoing: ServerResponse): void {
  outgoing.statusCode = response.status;
  response.headers.forEach((value, name) => {
    outgoing.setHeader(name, value);
  });
}

/** Resolves once the socket can take more, or once it is gone (then nothing more is written). */
function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });
}

/**
 * Writes chunks as they come, without a length (chunked). Only for bodies that may never end (a
 * stalled body): the head and what there is must reach the client while the rest never comes.
 */
async function streamResponse(response: Response, outgoing: ServerResponse): Promise<void> {
  writeHead(response, outgoing);
  outgoing.flushHeaders();
  const reader = response.body?.getReader();
  if (!reader) return void outgoing.end();
  outgoing.on('close', () => {
    reader.cancel().catch(() => undefined);
  });
  for (;;) {
    const { done, value } = await reader.read();
    if (done || outgoing.destroyed) break;
    if (!outgoing.write(value)) await drained(outgoing);
  }
  if (!outgoing.destroyed) outgoing.end();
}

async function writeResponse(response: Response, outgoing: ServerResponse): Promise<void> {
  if (outgoing.destroyed) {
    await response.body?.cancel();
    return;
  }
  if (isStreamed(response)) return streamResponse(response, outgoing);
  const body = new Uint8Array(await response.arrayBuffer());
  if (outgoing.destroyed) return;
  writeHead(response, outgoing);
  if (!outgoing.hasHeader('content-length') && response.status !== 204 && response.status !== 304) {
    outgoing.setHeader('content-length', body.length);
  }
  outgoing.end(body);
}

/**
 * A `node:http` request listener for a dispatcher. `origin` is used when a request has no Host
 * header. The request's signal aborts when the client goes away before the answer was sent.
 */
export function nodeListener(
  dispatch: Dispatch,
  origin: () => string,
): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  return (incoming, outgoing) => {
    const controller = new AbortController();
    outgoing.on('close', () => {
      if (!outgoing.writableFinished) controller.abort(new DOMException('Client went away', 'AbortError'));
    });
    const connection: Connection = {
      reset() {
        incoming.socket.destroy();
        // Never delivered: the socket is gone.
        return new Response(null, { status: 500 });
      },
      aborted() {
        // Never delivered: the client has already gone away.
        return new Response(null, { status: 499 });
      },
    };
    toRequest(incoming, origin(), controller.signal)
      .then((request) => dispatch(request, connection, controller.signal))
      .catch((error: unknown) =>
        error instanceof BadHost
          ? new Response(
              JSON.stringify({ detail: 'Bad request: the Host header or the target is no valid URL.' }),
              {
                status: 400,
                headers: { 'content-type': 'application/json' },
              },
            )
          : new Response(JSON.stringify({ detail: 'Internal server error.' }), {
              status: 500,
              headers: { 'content-type': 'application/json' },
            }),
      )
      .then((response) => writeResponse(response, outgoing))
      .catch(() => {
        outgoing.destroy();
      });
  };
}
