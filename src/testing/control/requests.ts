import type { Hono } from 'hono';
import { json } from '../errors.js';
import { queryOf } from '../routes/context.js';
import { optionalQuery } from '../validation.js';
import type { ControlContext } from './context.js';
import { noContent, resource } from './resource.js';

/**
 * `/_mock/requests`: GET lists the recorded `/api/` requests, oldest first (`{ requests }`),
 * optionally filtered by `?method=` (case-insensitive) and `?path=` (a prefix of the raw path);
 * DELETE clears the log (204).
 */
export function registerRequestControl(app: Hono, context: ControlContext): void {
  const { requests } = context;
  resource(app, '/requests', {
    GET(c) {
      const query = queryOf(c.req.url);
      const filter = { method: optionalQuery(query, 'method'), path: optionalQuery(query, 'path') };
      return json({ requests: requests.all(filter) });
    },
    DELETE() {
      requests.clear();
      return noContent();
    },
  });
}
