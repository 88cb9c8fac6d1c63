// The SDK under test, from its built package (bench's dependency `billing-sdk: file:..`), with default
// engine (in Node: ky on undici's dispatcher API) and
// options (strict response validation) except retries, which are off so nothing extra happens.
import { BillingClient } from 'billing-sdk';

export const label = 'billing-sdk invoices.list (strict)';
export const pkg = 'billing-sdk';

/** @param {import('../shared.mjs').Target} t */
export async function create(t) {
  const billing = new BillingClient({ apiKey: t.apiKey, baseUrl: `${t.origin}/api/`, maxRetries: 0 });
  return async () => {
    // Awaiting the PagePromise loads and validates the first page only.
    const page = await billing.invoices.list({
      account_ref_id: t.query.account_ref_id,
      page_size: t.query.page_size,
    });
    return page.results;
  };
}
