import type { Hono } from 'hono';
import { json } from '../errors.js';
import { FieldErrors, requireQuery } from '../validation.js';
import { rejectRead } from './account-read.js';
import { queryOf, type RouteContext, route } from './context.js';

const ENTITLEMENT_QUERY = ['account_ref_id', 'product_code', 'entitlement_code'] as const;

/** `GET /entitlements/check/`: has_access from the store, codes echoed. */
export function registerEntitlements(app: Hono, { store }: RouteContext): void {
  route(app, 'GET', '/api/entitlements/check/', (c) => {
    const errors = new FieldErrors();
    const q = requireQuery(queryOf(c.req.url), ENTITLEMENT_QUERY, errors);
    return (
      rejectRead(errors, store, q.account_ref_id) ??
      json({ ...q, has_access: store.entitlement(q.account_ref_id, q.product_code, q.entitlement_code) })
    );
  });
}
