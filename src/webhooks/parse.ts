import { WebhookError } from '../core/errors.js';
import { type WebhookEvent, WebhookEventSchema } from '../schemas/webhook.js';

/**
 * Parses and validates a webhook body: the raw text or bytes, or an object a body parser already
 * made. Unknown event names and extra fields pass through.
 *
 * @throws {@link WebhookError} when the body is not JSON or lacks a documented field.
 * @example
 * ```ts
 * const event = parseWebhook(await request.text());
 * if (event.event === 'subscription-created') grantAccess(event.account_ref_id);
 * ```
 */
export function parseWebhook(body: string | Uint8Array | object): WebhookEvent {
  let data: unknown = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
    try {
      data = JSON.parse(text);
    } catch {
      throw new WebhookError('webhook body is not JSON');
    }
  }
  const result = WebhookEventSchema.safeParse(data);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === 'number' ? p : String(p))),
    message: i.message,
    code: i.code,
  }));
  throw new WebhookError(
    `webhook body is not a valid event: ${issues.map((i) => i.path.join('.') || '(body)').join(', ')}`,
    issues,
  );
}
