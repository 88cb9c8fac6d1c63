import type { Hono } from 'hono';
import { json, notFound } from '../errors.js';
import type { LedgerEntry } from '../records.js';
import { FieldErrors, requireQuery } from '../validation.js';
import { rejectRead } from './account-read.js';
import { queryOf, type RouteContext, route } from './context.js';
import { METER_QUERY, readUsageRequest } from './usage-input.js';

/** `GET /usage/credits/balance/` and `POST /usage/credits/debit/`. */
export function registerCredits(app: Hono, { store, config }: RouteContext): void {
  route(app, 'GET', '/api/usage/credits/balance/', (c) => {
    const errors = new FieldErrors();
    const q = requireQuery(queryOf(c.req.url), METER_QUERY, errors);
    return (
      rejectRead(errors, store, q.account_ref_id) ??
      json({ ...q, balance: store.balance(q.account_ref_id, q.product_code, q.meter_code) })
    );
  });

  route(app, 'POST', '/api/usage/credits/debit/', async (c) => {
    const input = await readUsageRequest(c.req.raw);
    if (!input.ok) return input.response;
    const debit = input.value;
    // The ledger is keyed by event_key: a replay answers the original result and moves nothing.
    // Only approved debits are kept; a refusal is evaluated again (a top-up may have happened).
    const original = store.ledger.get(debit.event_key);
    if (original) return json(original.body, original.status);
    if (!store.account(debit.account_ref_id)) return notFound();
    const product = store.productByCode(debit.product_code);
    if (product?.usage_model !== 'prepaid_credits' || !product.meters.includes(debit.meter_code)) {
      return json(
        { approved: false, error_code: 'invalid_usage_model', remaining_balance: 0 },
        config.refusalStatus.invalidUsageModel,
      );
    }
    const balance = store.balance(debit.account_ref_id, debit.product_code, debit.meter_code);
    if (balance < debit.quantity) {
      return json(
        { approved: false, error_code: 'insufficient_credits', remaining_balance: balance },
        config.refusalStatus.insufficientCredits,
      );
    }
    const remaining = balance - debit.quantity;
    store.setBalance(debit.account_ref_id, debit.product_code, debit.meter_code, remaining);
    const entry: LedgerEntry = {
      ...debit,
      created_at: store.now(),
      status: 200,
      body: { approved: true, debited: debit.quantity, remaining_balance: remaining },
    };
    store.ledger.set(debit.event_key, entry);
    return json(entry.body, entry.status);
  });
}
