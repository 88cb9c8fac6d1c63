import type { Hono } from 'hono';
import { appUrlFor } from '../config.js';
import { json, notFound } from '../errors.js';
import type { SubscriptionRecord } from '../records.js';
import { absoluteUrl, statusMultipleWire, statusSingleWire } from '../serialize.js';
import type { MockStore } from '../store.js';
import { FieldErrors, optionalQuery, requireQuery } from '../validation.js';
import { pathSegment, queryOf, type RouteContext, route } from './context.js';

/** Subscriptions of an account to one subscription product, optionally one tier of it. */
function matchingSubscriptions(
  store: MockStore,
  accountRefId: string,
  subscriptionName: string,
  tierName: string | undefined,
): SubscriptionRecord[] {
  const product = store.productByLabel(subscriptionName, 'subscription');
  if (!product) return [];
  return store
    .subscriptions(accountRefId)
    .filter(
      (s) =>
        s.product_manage_id === product.manage_id &&
        (tierName === undefined || s.tier_label_name === tierName),
    );
}

/**
 * When a filter matches several subscriptions (e.g. an upgrade left an inactive one behind),
 * the active one is the account's state; among equals the most recently updated wins.
 */
function preferred(subscriptions: SubscriptionRecord[]): SubscriptionRecord | undefined {
  return [...subscriptions].sort(
    (a, b) => Number(b.is_active) - Number(a.is_active) || b.updated_at.localeCompare(a.updated_at),
  )[0];
}

/** A 200 with a zero-byte body: fix-subscription's documented "nothing to fix". */
function emptyBody(): Response {
  return new Response(null, { status: 200, headers: { 'content-length': '0' } });
}

/** `GET /account/<id>/status/` and `GET /fix-subscription/`. */
export function registerAccounts(app: Hono, { store, config }: RouteContext): void {
  route(app, 'GET', '/api/account/:account_ref_id/status/', (c) => {
    const accountRefId = pathSegment(c.req.url, 3);
    const account = store.account(accountRefId);
    if (!account) return notFound();
    const query = queryOf(c.req.url);
    const subscriptionName = optionalQuery(query, 'subscription');
    if (subscriptionName !== undefined) {
      // The reference evaluates `tier` only together with `subscription`.
      const match = preferred(
        matchingSubscriptions(store, accountRefId, subscriptionName, optionalQuery(query, 'tier')),
      );
      return match ? json(statusSingleWire(store, account, match)) : notFound();
    }
    const subscriptions = store.subscriptions(accountRefId);
    const [only] = subscriptions;
    if (!only) return notFound();
    if (subscriptions.length === 1) return json(statusSingleWire(store, account, only));
    return json(statusMultipleWire(store, account, subscriptions));
  });

  route(app, 'GET', '/api/fix-subscription/', (c) => {
    const errors = new FieldErrors();
    const q = requireQuery(queryOf(c.req.url), ['account_ref_id', 'subscription_name', 'tier_name'], errors);
    if (!errors.empty) return errors.toResponse();
    if (!store.account(q.account_ref_id)) return notFound();
    const subscriptions = matchingSubscriptions(store, q.account_ref_id, q.subscription_name, q.tier_name);
    if (subscriptions.length === 0) return notFound();
    for (const subscription of subscriptions) {
      if (subscription.is_active) continue;
      const invoice = store
        .invoices({ account_ref_id: q.account_ref_id, status: 'open' })
        .find((i) => i.processor_subscription_id === subscription.subscription_id);
      if (invoice)
        return json({ url: absoluteUrl(invoice.hosted_invoice_url, appUrlFor(config, c.req.url)) });
    }
    return emptyBody();
  });
}
