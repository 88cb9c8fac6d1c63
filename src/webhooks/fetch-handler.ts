import {
  deliveryAnswerer,
  INTERNAL_ERROR_REPLY,
  type WebhookHandlerOptions,
  type WebhookReply,
} from './handle.js';

/**
 * A webhook receiver for any Fetch API runtime (Hono, Next.js route handlers, Bun, Deno, workers):
 * `Request` in, `Response` out. Answers 200 `{"received": true}` once `onEvent` resolved, 200 again
 * for a `transaction_id` already processed (without calling `onEvent`), 409 with `Retry-After` for
 * one another receiver is processing right now, 400 for a malformed body, 413 for one over
 * `maxBodyBytes`, 405 for anything but POST, 400 when the body cannot be read, and 500 when
 * `onEvent` or the dedupe store fails. The returned promise never rejects.
 *
 * @example
 * ```ts
 * const handler = createWebhookHandler({
 *   onEvent: async (event) => {
 *     const active = await billing.accounts.isActive({ account_ref_id: event.account_ref_id });
 *     await db.setActive(event.account_ref_id, active);
 *   },
 * });
 * app.post('/webhooks/billing', (c) => handler(c.req.raw));
 * ```
 */
export function createWebhookHandler(
  options: WebhookHandlerOptions,
): (request: Request) => Promise<Response> {
  const answer = deliveryAnswerer(options);
  // A framework may not catch a rejection from its handler (or turn it into an HTML page): always a Response.
  return async (request) => {
    try {
      return reply(await answer(request.method, (limit) => readLimited(request, limit)));
    } catch {
      // Not a Request at all (a framework handed over something else): still an answer.
      return reply(INTERNAL_ERROR_REPLY);
    }
  };
}

function reply({ status, headers, body }: WebhookReply): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, 'content-type': 'application/json' },
  });
}

/** The body as text, or `undefined` once it exceeds `limit` bytes (reading stops there). */
async function readLimited(request: Request, limit: number): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length'));
  if (declared > limit) return undefined;
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // Only to stop the upload; a stream that fails while cancelling is still too large (413).
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
