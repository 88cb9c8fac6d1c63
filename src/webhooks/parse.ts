import { type ValidationIssue, WebhookError } from '../core/errors/index.js';
import { text } from '../internal/checks.js';
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
  const issues = result.success
    ? identifierIssues(result.data)
    : result.error.issues.map((i) => ({
        path: i.path.map((p) => (typeof p === 'number' ? p : String(p))),
        message: i.message,
        code: i.code,
      }));
  if (result.success && issues.length === 0) return result.data;
  throw new WebhookError(
    `webhook body is not a valid event: ${issues.map((i) => i.path.join('.') || '(body)').join(', ')}`,
    issues,
  );
}

/**
 * The ids a receiver acts on must name something: an empty `account_ref_id` (or one with a lone
 * surrogate) can be invalidated nowhere, and a receiver that failed on it would answer 500 and be
 * sent it again for ever. Such a delivery is malformed (a 400), as a missing field is.
 */
function identifierIssues(event: WebhookEvent): ValidationIssue[] {
  return (['account_ref_id', 'transaction_id'] as const).flatMap((field) => {
    const message = text(event[field]);
    return typeof message === 'string' ? [{ path: [field], message, code: 'custom' }] : [];
  });
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
