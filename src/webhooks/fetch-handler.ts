import { checkOptionsObject } from '../internal/checks.js';
import { readLimited } from '../internal/transport/read-body.js';
import { BodyTooLarge } from '../platform/engine.js';
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
 * @throws {@link InvalidRequestError} when `options` is not a plain object or an option is invalid.
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
  checkOptionsObject('createWebhookHandler', options);
  const answer = deliveryAnswerer(options);
  // A framework may not catch a rejection from its handler (or turn it into an HTML page): always a Response.
  return async (request) => {
    try {
      return reply(await answer(request.method, (limit) => readUpTo(request, limit)));
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
async function readUpTo(request: Request, limit: number): Promise<string | undefined> {
  if (Number(request.headers.get('content-length')) > limit) return undefined;
  try {
    return await readLimited(request.body, limit);
  } catch (error) {
    if (error instanceof BodyTooLarge) return undefined;
    throw error;
  }
}
