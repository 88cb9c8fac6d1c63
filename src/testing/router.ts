import { Hono } from 'hono';
import { isAuthorized } from './auth.js';
import { json, routeNotFound, unauthorized } from './errors.js';
import { registerAccounts } from './routes/accounts.js';
import { registerCatalog } from './routes/catalog.js';
import type { RouteContext } from './routes/context.js';
import { registerEntitlements } from './routes/entitlements.js';
import { registerHostedPages } from './routes/hosted.js';
import { registerInvoices } from './routes/invoices.js';
import { registerResolve } from './routes/resolve.js';
import { registerTransactions } from './routes/transactions.js';
import { registerCredits } from './routes/usage-credits.js';
import { registerUsageEvents } from './routes/usage-events.js';

/**
 * The Hono application: API key check on `/api/*`, every endpoint of the reference, hosted pages.
 * Internal: the public surface wraps it (faults, request log, CORS) and never exposes Hono types.
 */
export function createRouter(context: RouteContext): Hono {
  const app = new Hono();
  app.use('/api/*', async (c, next) => {
    if (!isAuthorized(c.req.raw.headers, context.config.apiKey)) return unauthorized();
    await next();
  });
  registerTransactions(app, context);
  registerAccounts(app, context);
  registerCatalog(app, context);
  registerInvoices(app, context);
  registerResolve(app, context);
  registerEntitlements(app, context);
  registerCredits(app, context);
  registerUsageEvents(app, context);
  registerHostedPages(app, context);
  app.notFound(() => routeNotFound());
  // A bug in the mock should look like a server error to the client, not crash the test run.
  app.onError(() => json({ detail: 'Internal server error.' }, 500));
  return app;
}
