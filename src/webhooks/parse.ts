import { WebhookError } from '../core/errors/index.js';
import { type WebhookEvent, WebhookEventSchema } from '../schemas/webhook.js';

/**
 * Parses and validates a webhook body: the raw text or bytes, or an object a body parser already
 * made. Unknown event names and extra fields pass through.
 *
 * @throws {@link WebhookError} for any body that is not a valid event (not JSON, a missing field, an
 * object whose properties throw when read); never another error.
 * @example
 * ```ts
 * const event = parseWebhook(await request.text());
 * if (event.event === 'subscription-created') grantAccess(event.account_ref_id);
 * ```
 */
export function parseWebhook(body: string | Uint8Array | object): WebhookEvent {
  let result: ReturnType<typeof WebhookEventSchema.safeParse>;
  try {
    result = WebhookEventSchema.safeParse(dataOf(body));
  } catch (error) {
    if (error instanceof WebhookError) throw error;
    // Bad shapes are issues, not throws: this is reading the input itself failing (a getter, a proxy
    // trap, even `instanceof`), which the caller learns nothing from either.
    throw new WebhookError('webhook body could not be read');
  }
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

/** The JSON value of a text or byte body; any other body is taken as already parsed. */
function dataOf(body: unknown): unknown {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return body;
  try {
    return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
  } catch {
    throw new WebhookError('webhook body is not JSON');
  }
}
