import type { Hono } from 'hono';
import { fieldErrors, json, MESSAGES } from '../errors.js';
import { FieldErrors, readJsonObject } from '../validation.js';
import type { ControlContext } from './context.js';
import { faultFromJson, faultToJson } from './fault-json.js';
import { noContent, resource } from './resource.js';

/**
 * `/_mock/faults`: GET lists the queued faults (`{ faults }`), POST queues one from a
 * {@link FaultJson} body (201 `{ fault }`), DELETE clears them all (204).
 */
export function registerFaultControl(app: Hono, context: ControlContext): void {
  const { faults } = context;
  resource(app, '/faults', {
    GET: () => json({ faults: faults.pending().map(faultToJson) }),
    async POST(c) {
      const parsed = await readJsonObject(c.req.raw);
      if (!parsed.ok) return parsed.response;
      if (Object.keys(parsed.body).length === 0) {
        return fieldErrors({ non_field_errors: [`${MESSAGES.required} Give at least one fault field.`] });
      }
      const errors = new FieldErrors();
      const fault = faultFromJson(parsed.body, errors);
      if (!errors.empty) return errors.toResponse();
      try {
        faults.add(fault);
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        return fieldErrors({ non_field_errors: [error.message] });
      }
      return json({ fault: faultToJson(fault) }, 201);
    },
    DELETE() {
      faults.clear();
      return noContent();
    },
  });
}
