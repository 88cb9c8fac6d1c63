import type { Hono } from 'hono';
import { isAuthorized } from '../auth.js';
import { unauthorized } from '../errors.js';
import type { ControlContext } from './context.js';
import { registerFaultControl } from './faults.js';
import { registerLifecycleControl } from './lifecycle.js';
import { registerRequestControl } from './requests.js';
import { registerResetControl } from './reset.js';
import { CONTROL_PREFIX } from './resource.js';
import { registerWebhookControl } from './webhooks.js';

/**
 * The control surface over HTTP, under {@link CONTROL_PREFIX} (`/_mock/`): faults, lifecycle
 * events, webhook receiver and deliveries, reset and the request log, for tests that drive the
 * mock from another process or language. Guarded by the API key in either header the API
 * accepts, with the API's 401 otherwise.
 */
export function registerControl(app: Hono, context: ControlContext): void {
  app.use(`${CONTROL_PREFIX}/*`, async (c, next) => {
    if (!isAuthorized(c.req.raw.headers, context.config.apiKey)) return unauthorized();
    await next();
  });
  registerFaultControl(app, context);
  registerRequestControl(app, context);
  registerLifecycleControl(app, context);
  registerWebhookControl(app, context);
  registerResetControl(app, context);
}
