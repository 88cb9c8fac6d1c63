// The scenario every runtime runs against the mock (Deno and Bun through serve.mjs, workerd through
// worker.mjs). It imports the package by its name, so each runtime gets the build its own export
// conditions pick, as a user's code would: the server build on Deno and Bun, the browser/worker build
// in a worker bundled the way wrangler bundles.
import {
  BillingClient,
  createCreditHolds,
  createWebhookHandler,
  signHostedLink,
  verifyHostedLink,
} from 'billing-sdk';

/** The account every step uses: 45 invoices, an active `pro-plan`/`pro`, 1000 credits in the demo seed. */
const ACCOUNT = 'acct_active';

/** Small pages, so the walk really crosses five of them. */
export const PAGE_SIZE = 10;

/**
 * @param {{ baseUrl: string, apiKey: string, signingKey: string, appUrl: string }} config
 * @returns {Promise<Record<string, unknown>>} plain JSON, for stdout or a Response
 */
export async function runScenario({ baseUrl, apiKey, signingKey, appUrl }) {
  const billing = new BillingClient({ baseUrl, apiKey });

  const ids = [];
  const pageSizes = [];
  for await (const page of billing.invoices.list({ account_ref_id: ACCOUNT, page_size: PAGE_SIZE }).pages()) {
    pageSizes.push(page.results.length);
    for (const invoice of page.results) ids.push(invoice.processor_invoice_id);
  }

  const status = await billing.accounts.status({ account_ref_id: ACCOUNT });
  const debit = await billing.usage.debit({
    account_ref_id: ACCOUNT,
    product_code: 'ai-assistant',
    meter_code: 'credits',
    quantity: 1,
  });

  // Credit holds in this runtime's build: reserve 3, settle 2 (one debit, under the hold's key).
  const holds = createCreditHolds(billing);
  const reserved = await holds.reserve({
    account_ref_id: ACCOUNT,
    product_code: 'ai-assistant',
    meter_code: 'credits',
    quantity: 3,
  });
  const settled = reserved.approved ? await reserved.hold.settle(2) : undefined;

  const link = await signHostedLink({
    appUrl,
    productUrlId: 'pu_ebook',
    account_ref_id: ACCOUNT,
    signingKey,
  });
  const verified = await verifyHostedLink(link, signingKey);
  let tampered = 'accepted';
  try {
    await verifyHostedLink(link, `${signingKey}-wrong`);
  } catch (error) {
    tampered = error.code;
  }

  return {
    invoices: { ids, pageSizes },
    status: {
      form: 'is_active' in status ? 'single' : 'multiple',
      is_active: status.is_active,
      tier: status.subscription_tier?.label_name,
    },
    debit: { approved: debit.approved, remaining: debit.remaining_balance, eventKey: debit.event_key },
    hold: {
      approved: reserved.approved,
      debited: settled?.approved ? settled.debited : 0,
      remaining: settled?.remaining_balance,
      eventKey: settled?.event_key,
    },
    link: { url: link, account_ref_id: verified.account_ref_id, tampered },
  };
}

/**
 * A webhook receiver as an app would write one: on each event it asks the API for the account's
 * state (the pattern the README recommends) and keeps what it saw, for the test to read back.
 *
 * @param {{ baseUrl: string, apiKey: string }} config
 * @param {(seen: Record<string, unknown>) => void} onSeen
 * @returns {(request: Request) => Promise<Response>}
 */
export function createReceiver({ baseUrl, apiKey }, onSeen) {
  const billing = new BillingClient({ baseUrl, apiKey });
  return createWebhookHandler({
    onEvent: async (event) => {
      const active = await billing.accounts.isActive({ account_ref_id: event.account_ref_id });
      onSeen({ event, active });
    },
  });
}
