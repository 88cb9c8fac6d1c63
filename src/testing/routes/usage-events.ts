import type { Hono } from 'hono';
import { json, MESSAGES, notFound } from '../errors.js';
import { POSTPAID_USAGE_MODELS } from '../records.js';
import type { TimeRange } from '../store.js';
import { FieldErrors, optionalQuery, parseIsoTimestamp, requireQuery } from '../validation.js';
import { rejectRead } from './account-read.js';
import { queryOf, type RouteContext, route } from './context.js';
import { METER_QUERY, readUsageRequest } from './usage-input.js';

/** `POST /usage/events/` and `GET /usage/summary/`. */
export function registerUsageEvents(app: Hono, { store, config }: RouteContext): void {
  route(app, 'POST', '/api/usage/events/', async (c) => {
    const input = await readUsageRequest(c.req.raw);
    if (!input.ok) return input.response;
    const event = input.value;
    // Events are immutable: a known event_key answers the original quantity, whatever was resent.
    const original = store.usageEvent(event.event_key);
    if (original) return json({ accepted: true, recorded_quantity: original.quantity, idempotent: true });
    if (!store.account(event.account_ref_id)) return notFound();
    const product = store.productByCode(event.product_code);
    const postpaid =
      product?.usage_model !== undefined && POSTPAID_USAGE_MODELS.includes(product.usage_model);
    if (!postpaid || !product?.meters.includes(event.meter_code)) {
      return json(
        { accepted: false, error_code: 'invalid_usage_model' },
        config.refusalStatus.invalidUsageModel,
      );
    }
    store.recordUsage(event);
    return json({ accepted: true, recorded_quantity: event.quantity, idempotent: false });
  });

  route(app, 'GET', '/api/usage/summary/', (c) => {
    const query = queryOf(c.req.url);
    const errors = new FieldErrors();
    const q = requireQuery(query, METER_QUERY, errors);
    const range: TimeRange = {};
    for (const bound of ['start', 'end'] as const) {
      const value = optionalQuery(query, bound);
      if (value === undefined) continue;
      const ms = parseIsoTimestamp(value);
      if (ms === undefined) errors.add(bound, MESSAGES.datetime);
      else range[bound] = ms;
    }
    return (
      rejectRead(errors, store, q.account_ref_id) ??
      json({ ...q, total_usage: store.usageTotal(q.account_ref_id, q.product_code, q.meter_code, range) })
    );
  });
}
