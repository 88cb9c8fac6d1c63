import type { Hono } from 'hono';
import { errorResponse, json } from '../errors.js';
import type { MockLifecycle } from '../lifecycle/lifecycle.js';
import type { MockLifecycleParams } from '../lifecycle/target.js';
import { bodyString, FieldErrors, readJsonObject } from '../validation.js';
import type { WebhookDelivery } from '../webhooks/deliver.js';
import { LIFECYCLE_EVENTS, type MockLifecycleEvent } from '../webhooks/payload.js';
import type { ControlContext } from './context.js';
import { rejectUnknownFields } from './fields.js';
import { resource } from './resource.js';

/** Which {@link MockLifecycle} change each webhook event name triggers. */
const TRIGGERS: Record<
  MockLifecycleEvent,
  (lifecycle: MockLifecycle, params: MockLifecycleParams) => Promise<WebhookDelivery>
> = {
  'subscription-created': (l, p) => l.subscribe(p),
  'payment-succeeded': (l, p) => l.paymentSucceeded(p),
  'payment-failed': (l, p) => l.paymentFailed(p),
  'subscription-cancelled': (l, p) => l.cancel(p),
  'subscription-cancel-at-period-end': (l, p) => l.cancelAtPeriodEnd(p),
  'subscription-incomplete': (l, p) => l.incomplete(p),
};

function isEvent(name: string): name is MockLifecycleEvent {
  return (LIFECYCLE_EVENTS as readonly string[]).includes(name);
}

/**
 * `/_mock/lifecycle`: GET lists the event names (`{ events }`); POST `/_mock/lifecycle/<event>`
 * with `{ account_ref_id, subscription?, tier? }` applies that change and posts its webhook, then
 * answers 200 `{ delivery }` once the delivery has finished (delivered or given up). An unknown
 * event, account, product, tier or subscription answers 404 `{ error }` and changes nothing.
 */
export function registerLifecycleControl(app: Hono, context: ControlContext): void {
  resource(app, '/lifecycle', { GET: () => json({ events: LIFECYCLE_EVENTS }) });
  resource(app, '/lifecycle/:event', {
    async POST(c) {
      const event = c.req.param('event') ?? '';
      if (!isEvent(event)) {
        return errorResponse(
          404,
          `Unknown lifecycle event "${event}"; one of ${LIFECYCLE_EVENTS.join(', ')}`,
        );
      }
      const parsed = await readJsonObject(c.req.raw);
      if (!parsed.ok) return parsed.response;
      const errors = new FieldErrors();
      rejectUnknownFields(parsed.body, ['account_ref_id', 'subscription', 'tier'], errors);
      const params: MockLifecycleParams = {
        account_ref_id: bodyString(parsed.body, 'account_ref_id', errors, true) ?? '',
        subscription: bodyString(parsed.body, 'subscription', errors, false),
        tier: bodyString(parsed.body, 'tier', errors, false),
      };
      if (!errors.empty) return errors.toResponse();
      try {
        return json({ delivery: await TRIGGERS[event](context.lifecycle, params) });
      } catch (error) {
        return errorResponse(404, error instanceof Error ? error.message : String(error));
      }
    },
  });
}
