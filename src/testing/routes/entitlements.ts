import type { Hono } from 'hono';
import { json, notFound } from '../errors.js';
import { FieldErrors, requireQuery } from '../validation.js';
import { queryOf, type RouteContext, route } from './context.js';

/** `GET /entitlements/check/`: has_access from the store, codes echoed. */
export function registerEntitlements(app: Hono, { store }: RouteContext): void {
  route(app, 'GET', '/api/entitlements/check/', (c) => {
    const errors = new FieldErrors();
    const q = requireQuery(
      queryOf(c.req.url),
      ['account_ref_id', 'product_code', 'entitlement_code'],
      errors,
    );
    if (!errors.empty) return errors.toResponse();
    if (!store.account(q.account_ref_id)) return notFound();
    return json({
      account_ref_id: q.account_ref_id,
      product_code: q.product_code,
      entitlement_code: q.entitlement_code,
      has_access: store.entitlement(q.account_ref_id, q.product_code, q.entitlement_code),
    });
  });
}
