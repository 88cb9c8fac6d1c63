import type { Hono } from 'hono';
import { json, notFound } from '../errors.js';
import { pageSlice, readPageParams } from '../pagination.js';
import type { TierRecord } from '../records.js';
import { productWire, tierWire } from '../serialize.js';
import { FieldErrors } from '../validation.js';
import { pathSegment, queryOf, type RouteContext, route } from './context.js';

/** Tiers answer `{count, results}` only (no links), as the reference's examples show, but honour paging. */
function tierPage(requestUrl: string, tiers: TierRecord[]): Response {
  const errors = new FieldErrors();
  const page = readPageParams(queryOf(requestUrl), errors);
  if (!errors.empty) return errors.toResponse();
  return json({ count: tiers.length, results: pageSlice(tiers, page).map(tierWire) });
}

/** `GET /tiers/`, `GET /tiers/<subscription_name>/` and `GET /products/`. */
export function registerCatalog(app: Hono, { store }: RouteContext): void {
  route(app, 'GET', '/api/tiers/', (c) => tierPage(c.req.url, store.tiers()));

  route(app, 'GET', '/api/tiers/:subscription_name/', (c) => {
    const product = store.productByLabel(pathSegment(c.req.url, 3), 'subscription');
    if (!product) return notFound();
    return tierPage(c.req.url, store.tiers(product.manage_id));
  });

  // No parameters: every product in one answer, ordered by title.
  route(app, 'GET', '/api/products/', () => {
    const products = store.products().map(productWire);
    return json({ count: products.length, results: products });
  });
}
