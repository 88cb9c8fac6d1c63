import type { Hono } from 'hono';
import { json } from '../errors.js';
import { pageEnvelope, readPageParams } from '../pagination.js';
import { TRANSACTION_STATUSES } from '../records.js';
import { transactionWire } from '../serialize.js';
import { FieldErrors, optionalChoice } from '../validation.js';
import { rejectRead } from './account-read.js';
import { pathSegment, queryOf, type RouteContext, route } from './context.js';

/** `GET /transactions/<account_ref_id>/`: paginated history, optional status filter. */
export function registerTransactions(app: Hono, { store }: RouteContext): void {
  route(app, 'GET', '/api/transactions/:account_ref_id/', (c) => {
    const accountRefId = pathSegment(c.req.url, 3);
    const query = queryOf(c.req.url);
    const errors = new FieldErrors();
    const page = readPageParams(query, errors);
    const status = optionalChoice(query, 'status', TRANSACTION_STATUSES, errors);
    const rejected = rejectRead(errors, store, accountRefId);
    if (rejected) return rejected;
    const items = store.transactions(accountRefId, status).map(transactionWire);
    return json(pageEnvelope(items, page, c.req.url));
  });
}
