import type { Hono } from 'hono';
import type { ControlContext } from './context.js';
import { noContent, resource } from './resource.js';

/**
 * `/_mock/reset`: POST gives a clean slate, as `reset()` in process does: the seed restored,
 * faults and the request log cleared, webhook deliveries under way abandoned, the delivery log
 * emptied and the start-up receiver (`--webhook-url`) registered again (204).
 */
export function registerResetControl(app: Hono, context: ControlContext): void {
  resource(app, '/reset', {
    POST() {
      context.reset();
      return noContent();
    },
  });
}
