// An invoice report: walk every invoice of an account with for await and total them.
// Run: node examples/invoice-report.mjs [account_ref_id]
import { BillingClient } from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';

/** Totals of every invoice of `account_ref_id`, by status and currency. Holds one page at a time. */
export async function invoiceReport(billing, account_ref_id) {
  const rows = new Map();
  let count = 0;
  for await (const invoice of billing.invoices.list({ account_ref_id, page_size: 100 })) {
    count++;
    const key = `${invoice.status} ${invoice.currency}`;
    const row = rows.get(key) ?? {
      status: invoice.status,
      currency: invoice.currency,
      invoices: 0,
      due: 0,
      paid: 0,
    };
    row.invoices++;
    row.due += invoice.amount_due;
    row.paid += invoice.amount_paid;
    rows.set(key, row);
  }
  return { count, rows: [...rows.values()].sort((a, b) => b.invoices - a.invoices) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mock = process.env.BILLING_BASE_URL ? undefined : await startMockServer();
  try {
    const billing = new BillingClient(mock ? { apiKey: mock.apiKey, baseUrl: mock.baseUrl } : {});
    const account = process.argv[2] ?? 'acct_active';
    const { count, rows } = await invoiceReport(billing, account);
    console.log(`${count} invoices for ${account}`);
    console.log('status         currency  invoices        due       paid');
    for (const r of rows) {
      console.log(
        `${r.status.padEnd(14)} ${r.currency.padEnd(8)} ${String(r.invoices).padStart(9)} ${r.due.toFixed(2).padStart(10)} ${r.paid.toFixed(2).padStart(10)}`,
      );
    }
  } finally {
    await mock?.close();
  }
}
