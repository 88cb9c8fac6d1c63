import { checkOptionsObject } from '../internal/checks.js';
import { deliveryAnswerer, type WebhookHandlerOptions, type WebhookReply } from './handle.js';

/**
 * The parts of Node's `IncomingMessage` (and Express's `Request`) the handler uses. Declared here so
 * the main entry imports nothing from Node.
 */
export interface NodeWebhookRequest {
  /** HTTP method; anything but `POST` is answered 405. */
  method?: string | undefined;
  /** Request headers, names lower-cased as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** Set by a body parser (Express `json()`, `raw()`, `text()`); read from the stream when absent. */
  body?: unknown;
  /** Receives a chunk of the raw body. */
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  /** Called once the whole body was read. */
  on(event: 'end', listener: () => void): unknown;
  /** Called when reading the body failed. */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** True once the stream was consumed (by a body parser): then `body` is all there is. */
  readableEnded?: boolean | undefined;
}

/** The parts of Node's `ServerResponse` the handler uses. */
export interface NodeWebhookResponse {
  /** Status of the answer, set before `end`. */
  statusCode: number;
  /** Sets one response header. */
  setHeader(name: string, value: string): unknown;
  /** Sends the body and finishes the answer. */
  end(body?: string): unknown;
}

/**
 * A webhook receiver for Node's `http` server and Express: `(req, res) => void`. Reads the raw body
 * itself, or uses `req.body` when a body parser already ran. Same answers as
 * {@link createWebhookHandler}.
 *
 * @throws {@link InvalidRequestError} when `options` is not a plain object or an option is invalid.
 *
 * @example
 * ```ts
 * app.post('/webhooks/billing', createNodeWebhookHandler({ onEvent: (event) => queue.push(event) }));
 * http.createServer(createNodeWebhookHandler({ onEvent })).listen(3000);
 * ```
 */
export function createNodeWebhookHandler(
  options: WebhookHandlerOptions,
): (req: NodeWebhookRequest, res: NodeWebhookResponse) => void {
  checkOptionsObject('createNodeWebhookHandler', options);
  const answer = deliveryAnswerer(options, 'createNodeWebhookHandler');
  return (req, res) => {
    const send = sendOnce(res);
    // Nothing may escape as a rejection: a Node server has no one to hand it to, and the default
    // unhandled-rejection handling ends the process.
    Promise.resolve()
      .then(() => answer(req.method, (limit) => bodyOf(req, limit)))
      .then(send)
      .catch(() => {
        // Writing the answer failed (the response was already ended or destroyed): nothing is left to tell.
      });
  };
}

/** A sender that writes at most one answer to `res`, so no failure path can end it twice. */
function sendOnce(res: NodeWebhookResponse): (reply: WebhookReply) => void {
  let sent = false;
  return ({ status, headers, body }) => {
    if (sent) return;
    sent = true;
    res.statusCode = status;
    for (const [name, value] of Object.entries(headers ?? {})) res.setHeader(name, value);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  };
}

/** The body as text or parsed object, or `undefined` when it is over `limit` bytes. */
function bodyOf(req: NodeWebhookRequest, limit: number): Promise<string | object | undefined> {
  const parsed = req.body;
  if (typeof parsed === 'string') return Promise.resolve(byteLength(parsed) > limit ? undefined : parsed);
  if (parsed instanceof Uint8Array) {
    return Promise.resolve(parsed.byteLength > limit ? undefined : new TextDecoder().decode(parsed));
  }
  // Express leaves `{}` when no parser matched the content type; then the stream is still unread.
  if (parsed && typeof parsed === 'object' && (Object.keys(parsed).length > 0 || req.readableEnded)) {
    // The raw size is gone once a parser ran; the re-serialised size is the closest measure.
    return Promise.resolve(byteLength(JSON.stringify(parsed)) > limit ? undefined : parsed);
  }
  if (Number(req.headers['content-length']) > limit) return Promise.resolve(undefined);
  // Consumed by something that left no body: waiting for 'end' would wait forever.
  if (req.readableEnded) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const decoder = new TextDecoder();
    let text = '';
    let size = 0;
    let over = false;
    req.on('data', (chunk) => {
      if (over) return;
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      size += bytes.byteLength;
      if (size > limit) {
        over = true;
        resolve(undefined);
        return;
      }
      text += decoder.decode(bytes, { stream: true });
    });
    req.on('end', () => {
      if (!over) resolve(text + decoder.decode());
    });
    req.on('error', reject);
  });
}

function byteLength(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}
