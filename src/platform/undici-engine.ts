import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher, EnvHttpProxyAgent } from 'undici';
import { BodyTooLarge, type Engine, type WireResponse } from './engine.js';

let shared: Promise<Dispatcher> | undefined;

/**
 * The dispatcher every client in the process shares unless given one. With none of `HTTPS_PROXY`,
 * `HTTP_PROXY` (or `https_proxy`, `http_proxy`) set, an undici `Agent` with undici's defaults, which
 * are also what Node's fetch runs on: no limit on connections per origin, idle sockets kept 4 s (or
 * what the server's `Keep-Alive` header says), 300 s header and body timeouts (the SDK's own
 * `timeout` is shorter). With one set, undici's `EnvHttpProxyAgent` with the same defaults, which
 * sends through the proxy every request whose host `NO_PROXY` does not name (see {@link proxyEnv}).
 * The environment is read once, here, on the first request: a change later in the process is not
 * seen. undici is loaded on the first request, so an application that never calls the API never
 * loads it.
 */
function sharedDispatcher(): Promise<Dispatcher> {
  shared ??= import('undici').then(({ Agent, EnvHttpProxyAgent }) => {
    const proxy = proxyEnv();
    if (!proxy) return new Agent();
    try {
      return new EnvHttpProxyAgent(proxy);
    } catch (error) {
      // Not the value itself: a proxy URL may hold a password.
      throw new TypeError('fetch failed', {
        cause: new Error(`HTTP(S)_PROXY is not a proxy URL undici can use: ${(error as Error).message}`),
      });
    }
  });
  return shared;
}

/**
 * The proxy settings in the environment, read as undici's `EnvHttpProxyAgent` reads them (the
 * lowercase name wins when both are set, even empty; an empty value is no proxy), or `undefined`
 * when no proxy is set. An https target goes through the https proxy, else the http one, in a
 * CONNECT tunnel: the proxy sees the target's host and port, never the request or its key. An http
 * target (in clear anyway) goes through the http proxy as an absolute-form request: `proxyTunnel:
 * false`, as curl does, since undici 7 would tunnel it too and proxies often refuse CONNECT to a
 * port other than 443. `NO_PROXY` lists the hosts reached directly (`host`, `.domain`, `*.domain`,
 * each optionally `:port`; the whole value `*`: all); loopback is not exempt unless listed. It is
 * passed as read: undici would otherwise read it again on every request.
 */
function proxyEnv(): EnvHttpProxyAgent.Options | undefined {
  const env = process.env;
  const httpProxy = env.http_proxy ?? env.HTTP_PROXY ?? '';
  const httpsProxy = env.https_proxy ?? env.HTTPS_PROXY ?? '';
  if (!httpProxy && !httpsProxy) return undefined;
  return { httpProxy, httpsProxy, noProxy: env.no_proxy ?? env.NO_PROXY ?? '', proxyTunnel: false };
}

const utf8 = new TextDecoder();

/**
 * ky's engine in Node: sends ky's `Request` with undici's `dispatcher.request()` and reads the body
 * while it waits, so no WHATWG stream, clone or second `Headers` is built per request. What Node's
 * fetch would do and the SDK relies on is done here too: it asks for and decodes gzip, deflate and
 * br; it follows no redirect (the 3xx comes back as it is); a failure rejects with
 * `TypeError('fetch failed', { cause })` and an abort with the signal's reason, so the request
 * path classifies both engines alike. Aborting the signal, in headers or body, destroys the socket.
 */
export function undiciEngine(dispatcher?: Dispatcher): Engine {
  let ready = dispatcher;
  return async (request, { body, signal, maxBytes }) => {
    ready ??= await sharedDispatcher();
    const url = new URL(request.url);
    const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br' };
    for (const [name, value] of request.headers) headers[name] = value;
    let answer: Dispatcher.ResponseData;
    try {
      answer = await ready.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: request.method as Dispatcher.HttpMethod,
        headers,
        body,
        signal,
      });
    } catch (error) {
      throw failure(error, signal);
    }
    const text = await readAll(answer, maxBytes, signal);
    return wireResponse(answer, text);
  };
}

/** The answer as fetch would have accepted it: a status outside 200–599 or a header no `Headers` takes is not HTTP. */
function wireResponse(answer: Dispatcher.ResponseData, text: string): WireResponse {
  const status = answer.statusCode;
  try {
    if (!(status >= 200 && status <= 599)) throw new RangeError(`status ${status}`);
    return { status, headers: new Headers(pairs(answer.headers)), text };
  } catch (error) {
    throw new TypeError('fetch failed', { cause: error });
  }
}

/** An abort as the signal's reason (what fetch rejects with); anything else as fetch's TypeError. */
function failure(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof BodyTooLarge) return error;
  if (signal.aborted) return signal.reason;
  return new TypeError('fetch failed', { cause: error });
}

/**
 * The whole body as text, decoded as its `content-encoding` says, stopping with
 * {@link BodyTooLarge} once the decoded bytes pass `limit` (so a small gzip body that inflates past
 * it is caught while it inflates). Events rather than `for await`: a page arrives in one or two
 * chunks, and an async iterator costs more than reading them.
 */
function readAll(answer: Dispatcher.ResponseData, limit: number, signal: AbortSignal): Promise<string> {
  const body = answer.body as unknown as Readable;
  const tooLarge = () =>
    new BodyTooLarge({ status: answer.statusCode, headers: new Headers(pairs(answer.headers)) });
  if (Number(answer.headers['content-length']) > limit) {
    body.destroy();
    return Promise.reject(tooLarge());
  }
  const decoder = decoderFor(answer.headers['content-encoding']);
  const source: Readable = decoder ? body.pipe(decoder) : body;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: unknown) => {
      body.destroy();
      decoder?.destroy();
      reject(failure(error, signal));
    };
    source.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) fail(tooLarge());
      else chunks.push(chunk);
    });
    source.on('end', () =>
      resolve(utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))),
    );
    source.on('error', fail);
    // `pipe` does not forward the source's errors (an abort, a reset mid-body) to the decoder.
    if (decoder) body.on('error', fail);
  });
}

function decoderFor(encoding: string | string[] | undefined): (Readable & NodeJS.WritableStream) | undefined {
  switch (typeof encoding === 'string' ? encoding.trim().toLowerCase() : undefined) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      // Like fetch: an encoding it does not know is handed on as it came.
      return undefined;
  }
}

function pairs(headers: Dispatcher.ResponseData['headers']): [string, string][] {
  const out: [string, string][] = [];
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) out.push([name, v]);
    else if (value !== undefined) out.push([name, value]);
  }
  return out;
}
