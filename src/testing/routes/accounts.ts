import type { Hono } from 'hono';
import { appUrlFor } from '../config.js';
import { json, notFound } from '../errors.js';
import { absoluteUrl, statusMultipleWire, statusSingleWire } from '../serialize.js';
import { matchingSubscriptions, openInvoices, preferred } from '../subscriptions.js';
import { FieldErrors, optionalQuery, requireQuery } from '../validation.js';
import { rejectRead } from './account-read.js';
import { pathSegment, queryOf, type RouteContext, route } from './context.js';

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
    const rejected = rejectRead(errors, store, q.account_ref_id);
    if (rejected) return rejected;
    const subscriptions = matchingSubscriptions(store, q.account_ref_id, q.subscription_name, q.tier_name);
    if (subscriptions.length === 0) return notFound();
    for (const subscription of subscriptions) {
      if (subscription.is_active) continue;
      const [invoice] = openInvoices(store, subscription);
      if (invoice)
        return json({ url: absoluteUrl(invoice.hosted_invoice_url, appUrlFor(config, c.req.url)) });
    }
    return emptyBody();
  });
}
