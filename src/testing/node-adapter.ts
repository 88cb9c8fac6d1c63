import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Connection, Dispatch } from './dispatch.js';

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

async function toRequest(incoming: IncomingMessage, origin: string, signal: AbortSignal): Promise<Request> {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] ?? '', raw[i + 1] ?? '');
  const host = incoming.headers.host;
  const url = new URL(incoming.url ?? '/', host ? `http://${host}` : origin);
  const method = incoming.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? undefined : await readBody(incoming);
  return new Request(url, { method, headers, signal, ...(body && body.length > 0 ? { body } : {}) });
}

async function writeResponse(response: Response, outgoing: ServerResponse): Promise<void> {
  const body = new Uint8Array(await response.arrayBuffer());
  if (outgoing.destroyed) return;
  outgoing.statusCode = response.status;
  response.headers.forEach((value, name) => {
    outgoing.setHeader(name, value);
  });
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
      .then((request) => dispatch(request, connection))
      .catch(
        () =>
          new Response(JSON.stringify({ detail: 'Internal server error.' }), {
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
