// npm run demo: the whole SDK against the embedded mock server, start to finish.
// Everything below is what an application would write; only startMockServer is test tooling.
import {
  APIUserAbortError,
  BillingClient,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
} from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';

const heading = (title) => console.log(`\n── ${title} ${'─'.repeat(Math.max(0, 66 - title.length))}`);
const show = (label, value) => console.log(`  ${label.padEnd(34)} ${value}`);

const server = await startMockServer();
console.log(`Mock Billing API listening at ${server.baseUrl}`);

const billing = new BillingClient({ apiKey: server.apiKey, baseUrl: server.baseUrl });

try {
  heading('Transactions: the first page');
  const page = await billing.transactions.list({ account_ref_id: 'acct_active', page_size: 5 });
  show('transactions of acct_active', `${page.count} in all, ${page.results.length} on this page`);
  for (const tx of page.results)
    show(`  …${tx.transaction_uuid.slice(-12)}`, `${tx.status.padEnd(10)} ${tx.amount} ${tx.currency}`);
  show('more pages?', page.hasNextPage());

  heading('Invoices: every page with for await');
  const byStatus = {};
  let pages = 0;
  for await (const p of billing.invoices.list({ account_ref_id: 'acct_active', page_size: 20 }).pages()) {
    pages++;
    for (const invoice of p.results) byStatus[invoice.status] = (byStatus[invoice.status] ?? 0) + 1;
  }
  show('pages walked', pages);
  for (const [status, n] of Object.entries(byStatus)) show(`  ${status}`, n);
  const open = await billing.invoices
    .list({ account_ref_id: 'acct_active', status: 'open' })
    .toArray({ limit: 1 });
  show('first open invoice pays at', open[0]?.hosted_invoice_url ?? '(none)');

  heading('Bad input is refused before anything is sent');
  try {
    await billing.invoices.list({ account_ref_id: 'acct_active', page_size: 500 });
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    show(err.name, err.message);
  }

  heading('Typed errors from the server');
  try {
    await billing.transactions.list({ account_ref_id: 'no_such_account' });
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    show(`${err.name} (${err.status})`, err.error);
  }

  heading('Retries: a 503, then success (logged at info level)');
  server.faults.add({ path: '/api/invoices/', status: 503, headers: { 'retry-after': '0' } });
  const logged = [];
  const chatty = billing.withOptions({
    logLevel: 'info',
    logger: { ...console, info: (m) => logged.push(m) },
  });
  const after = await chatty.invoices.list({ account_ref_id: 'acct_active' });
  for (const line of logged) show('log', line);
  show('then', `${after.results.length} invoices on the first page`);

  heading('Rate limits: a Retry-After longer than maxRetryDelay is not waited out');
  server.faults.add({ path: '/api/invoices/', status: 429, headers: { 'retry-after': '120' } });
  try {
    await billing.withOptions({ maxRetryDelay: 10_000 }).invoices.list({ account_ref_id: 'acct_active' });
  } catch (err) {
    if (!(err instanceof RateLimitError)) throw err;
    show(err.name, `retry after ${err.retryAfterMs} ms`);
  }

  heading('Timeouts and AbortSignal');
  server.faults.add({ path: '/api/invoices/', delayMs: 5_000 });
  try {
    await billing.invoices.list({ account_ref_id: 'acct_active' }, { signal: AbortSignal.timeout(200) });
  } catch (err) {
    if (!(err instanceof APIUserAbortError)) throw err;
    show(err.name, err.message);
  }
  server.faults.clear();

  console.log('\nDone: every call above went over HTTP to the mock server.');
} finally {
  await server.close();
}
