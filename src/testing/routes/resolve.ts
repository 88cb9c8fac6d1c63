import type { Hono } from 'hono';
import { appUrlFor } from '../config.js';
import { errorResponse, json } from '../errors.js';
import { FieldErrors, optionalQuery, requireQuery } from '../validation.js';
import { queryOf, type RouteContext, route } from './context.js';

/** The resolve endpoint's documented `error` messages. */
export const RESOLVE_ERRORS = {
  /**
   * 400: neither `product_name` nor both `subscription_name` and `tier_name`, or `product_name` with
   * either.
   */
  mode: 'Provide product_name or both subscription_name and tier_name',
  /** 404: no single product with that `product_name`, or one that is not saas_only. */
  productNotFound: 'Product not found',
  /** 400: `subscription_name` and `tier_name` without `email`. */
  emailForTier: 'email is required when using subscription_name and tier_name',
  /** 400: a saas_only `product_name` without `email`. */
  emailForProduct: 'email is required when using a saas_only product',
  /** 404: no subscription product with that `subscription_name`, or one that is not saas_only. */
  subscriptionNotFound: 'Subscription product not found',
  /** 404: the subscription product has no tier with that `tier_name`. */
  tierNotFound: 'Subscription tier not found',
} as const;

/**
 * `GET /resolve/public-url/`. Any account_ref_id is accepted (a paywall link may be for a
 * customer who does not exist yet); only saas_only entries resolve, others answer 404.
 */
export function registerResolve(app: Hono, { store, config }: RouteContext): void {
  route(app, 'GET', '/api/resolve/public-url/', (c) => {
    const query = queryOf(c.req.url);
    const errors = new FieldErrors();
    requireQuery(query, ['account_ref_id'], errors);
    if (!errors.empty) return errors.toResponse();
    const productName = optionalQuery(query, 'product_name');
    const subscriptionName = optionalQuery(query, 'subscription_name');
    const tierName = optionalQuery(query, 'tier_name');
    const email = optionalQuery(query, 'email');
    const appUrl = appUrlFor(config, c.req.url);

    if (productName !== undefined) {
      if (subscriptionName !== undefined || tierName !== undefined)
        return errorResponse(400, RESOLVE_ERRORS.mode);
      const product = store.productByLabel(productName, 'single');
      if (!product?.saas_only) return errorResponse(404, RESOLVE_ERRORS.productNotFound);
      if (email === undefined) return errorResponse(400, RESOLVE_ERRORS.emailForProduct);
      return json({ public_url: `${appUrl}/p/${encodeURIComponent(product.product_url_id)}` });
    }

    if (subscriptionName === undefined || tierName === undefined)
      return errorResponse(400, RESOLVE_ERRORS.mode);
    if (email === undefined) return errorResponse(400, RESOLVE_ERRORS.emailForTier);
    const product = store.productByLabel(subscriptionName, 'subscription');
    if (!product?.saas_only) return errorResponse(404, RESOLVE_ERRORS.subscriptionNotFound);
    const tier = store.tier(product.manage_id, tierName);
    if (!tier) return errorResponse(404, RESOLVE_ERRORS.tierNotFound);
    return json({ type: 'redirect', url: `${appUrl}/t/${encodeURIComponent(tier.tier_url_id)}` });
  });
}
