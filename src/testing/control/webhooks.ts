import type { Hono } from 'hono';
import { errorResponse, json } from '../errors.js';
import { bodyString, FieldErrors, readJsonObject } from '../validation.js';
import type { ControlContext } from './context.js';
import { rejectUnknownFields } from './fields.js';
import { noContent, resource } from './resource.js';

/**
 * `/_mock/webhooks/receiver`: GET answers `{ url }` (null when none), PUT `{ url }` registers an
 * absolute http(s) URL (200 `{ url }`), DELETE unregisters (204).
 * `/_mock/webhooks/deliveries`: GET lists finished deliveries, oldest first (`{ deliveries }`).
 * `/_mock/webhooks/deliveries/<transaction_id>/redeliver`: POST posts a logged webhook again, byte
 * for byte, to the receiver registered now (200 `{ delivery }`; 404 `{ error }` when unknown).
 */
export function registerWebhookControl(app: Hono, context: ControlContext): void {
  const { webhooks } = context;
  resource(app, '/webhooks/receiver', {
    GET: () => json({ url: webhooks.current() ?? null }),
    async PUT(c) {
      const parsed = await readJsonObject(c.req.raw);
      if (!parsed.ok) return parsed.response;
      const errors = new FieldErrors();
      rejectUnknownFields(parsed.body, ['url'], errors);
      const url = bodyString(parsed.body, 'url', errors, true);
      if (!errors.empty || url === undefined) return errors.toResponse();
      try {
        webhooks.api.register(url);
      } catch (error) {
        errors.add('url', (error as Error).message);
        return errors.toResponse();
      }
      return json({ url });
    },
    DELETE() {
      webhooks.api.unregister();
      return noContent();
    },
  });
  resource(app, '/webhooks/deliveries', { GET: () => json({ deliveries: webhooks.api.deliveries() }) });
  resource(app, '/webhooks/deliveries/:transaction_id/redeliver', {
    async POST(c) {
      try {
        return json({ delivery: await webhooks.api.redeliver(c.req.param('transaction_id') ?? '') });
      } catch (error) {
        return errorResponse(404, (error as Error).message);
      }
    },
  });
}
