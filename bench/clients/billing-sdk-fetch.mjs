// The SDK on the other engine: ky on Node's global fetch (what a user gets by passing `fetch`, and
// what Deno, Bun, browsers and workers run), side by side with the default engine (undici's
// dispatcher API, `billing-sdk`).
import { BillingClient } from 'billing-sdk';

export const label = 'billing-sdk invoices.list (strict), ky on global fetch';
export const pkg = 'billing-sdk';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  const billing = new BillingClient({
    apiKey: t.apiKey,
    baseUrl: `${t.origin}/api/`,
    maxRetries: 0,
    fetch: (input, init) => fetch(input, init),
  });
  return async () => {
    const page = await billing.invoices.list({
      account_ref_id: t.query.account_ref_id,
      page_size: t.query.page_size,
    });
    return page.results;
  };
}
