// billing-sdk as in billing-sdk.mjs, with a subscriber on both of its tracing channels (issue 21): what
// tracing costs once a tracer listens. The subscriber reads the fields a tracer would and keeps nothing,
// so the difference is the SDK's own work (building and publishing each call's and attempt's context).
import diagnostics from 'node:diagnostics_channel';
import { BillingClient } from 'billing-sdk';

export const label = 'billing-sdk invoices.list (strict), traced';
export const pkg = 'billing-sdk';

let seen = 0;
const read = (trace) => {
  if (trace.route && trace.attempt) seen++;
};
const subscriber = { start: read, end: read, asyncStart: read, asyncEnd: read, error: read };

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  diagnostics.tracingChannel('billing-sdk:request').subscribe(subscriber);
  diagnostics.tracingChannel('billing-sdk:attempt').subscribe(subscriber);
  const billing = new BillingClient({ apiKey: t.apiKey, baseUrl: `${t.origin}/api/`, maxRetries: 0 });
  return async () => {
    const page = await billing.invoices.list({
      account_ref_id: t.query.account_ref_id,
      page_size: t.query.page_size,
    });
    if (seen === 0) throw new Error('the tracing subscriber saw nothing');
    return page.results;
  };
}
