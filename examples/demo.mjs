// npm run demo: the whole SDK against the embedded mock server, start to finish.
// Everything below is what an application would write; only startMockServer is test tooling.

import { createServer } from 'node:http';
import {
  APIUserAbortError,
  BillingClient,
  createNodeWebhookHandler,
  InvalidRequestError,
  memoryCooldown,
  NotFoundError,
  RateLimitError,
  signHostedLink,
  subscriptionsOf,
  tierFeatures,
  verifyHostedLink,
} from 'billing-sdk';
import { startMockServer } from 'billing-sdk/testing';

const heading = (title) => console.log(`\n── ${title} ${'─'.repeat(Math.max(0, 66 - title.length))}`);
const show = (label, value) => console.log(`  ${label.padEnd(34)} ${value}`);

const server = await startMockServer();
console.log(`Mock Billing API listening at ${server.baseUrl}`);

const billing = new BillingClient({ apiKey: server.apiKey, baseUrl: server.baseUrl });

try {
  heading('Accounts: gate features on live status');
  for (const id of ['acct_active', 'acct_past_due', 'acct_empty']) {
    show(`isActive(${id})`, await billing.accounts.isActive({ account_ref_id: id }));
  }
  const multi = await billing.accounts.status({ account_ref_id: 'acct_multi' });
  for (const sub of subscriptionsOf(multi)) {
    show(
      `  acct_multi ${sub.subscription_tier.product_manage_id}/${sub.subscription_tier.label_name}`,
      sub.is_active ? 'active' : 'inactive',
    );
  }
  const fix = await billing.accounts.fixSubscription({
    account_ref_id: 'acct_past_due',
    subscription_name: 'pro-plan',
    tier_name: 'pro',
  });
  show('fixSubscription(acct_past_due)', fix?.url ?? null);
  const nothing = await billing.accounts.fixSubscription({
    account_ref_id: 'acct_active',
    subscription_name: 'pro-plan',
    tier_name: 'pro',
  });
  show('fixSubscription(acct_active)', nothing);

  heading('Catalog: products and tiers');
  for await (const product of billing.products.list()) {
    show(`  ${product.label_name}`, `${product.type}${product.price ? ` ${product.price}` : ''}`);
  }
  for (const tier of await billing.tiers.list({ subscription_name: 'pro-plan' }).toArray()) {
    show(
      `  pro-plan/${tier.label_name}`,
      `${tier.price}/${tier.billing_cycle}: ${tierFeatures(tier).join(', ')}`,
    );
  }

  heading('Entitlements');
  for (const code of ['export', 'admin']) {
    const check = await billing.entitlements.check({
      account_ref_id: 'acct_active',
      product_code: 'ai-assistant',
      entitlement_code: code,
    });
    show(`acct_active ${code}`, check.has_access ? 'granted' : 'denied');
  }

  heading('Prepaid credits: debit before the action');
  const meter = { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' };
  show('balance', (await billing.usage.balance(meter)).balance);
  const debit = await billing.usage.debit({ ...meter, quantity: 25, metadata: { feature: 'summarise' } });
  show(
    'debit 25',
    debit.approved
      ? `approved, ${debit.remaining_balance} left (event_key ${debit.event_key.slice(0, 8)}…)`
      : debit.error_code,
  );
  const again = await billing.usage.debit({ ...meter, quantity: 25, event_key: debit.event_key });
  show(
    'same event_key again',
    `${again.approved ? 'approved' : again.error_code}, balance still ${again.remaining_balance}`,
  );
  server.faults.add({ path: '/api/usage/credits/debit/', reset: 'after' });
  const lost = await billing.usage.debit({ ...meter, quantity: 5 });
  show(
    'response lost after commit',
    `retried with the same key: ${lost.remaining_balance} left (moved once)`,
  );
  const refused = await billing.usage.debit({ ...meter, quantity: 1_000_000 });
  show(
    'debit 1 000 000',
    refused.approved ? 'approved?!' : `refused: ${refused.error_code}, balance ${refused.remaining_balance}`,
  );

  heading('Metered usage: record after the action');
  const calls = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
  const event = await billing.usage.record({ ...calls, quantity: 3 });
  show('record 3', `accepted=${event.accepted} idempotent=${event.accepted && event.idempotent}`);
  const replay = await billing.usage.record({ ...calls, quantity: 3, event_key: event.event_key });
  show('replay', `accepted=${replay.accepted} idempotent=${replay.accepted && replay.idempotent}`);
  const jan = await billing.usage.summary({
    ...calls,
    start: new Date('2026-01-01T00:00:00Z'),
    end: '2026-01-31T23:59:59Z',
  });
  show('api_calls in January 2026', jan.total_usage);

  heading('Invoices: create one');
  const created = await billing.invoices.create({
    product_manage_id: 'prod_consulting',
    amount: 250,
    currency: 'usd',
    customer_email: 'ada@example.com',
    account_ref_id: 'acct_empty',
  });
  show('hosted invoice', created.hosted_invoice_url);

  heading('Resolve: the public URL of a SaaS product or tier');
  const product = await billing.resolve.publicUrl({
    account_ref_id: 'acct_new',
    product_name: 'ebook',
    email: 'new@example.com',
  });
  show('ebook (shape A)', product.url);
  const tierUrl = await billing.resolve.publicUrl({
    account_ref_id: 'acct_new',
    subscription_name: 'pro-plan',
    tier_name: 'pro',
    email: 'new@example.com',
  });
  show('pro-plan/pro (shape B)', tierUrl.url);

  heading('Hosted links: resolve, sign, open');
  const link = await billing.resolve.signedUrl(
    { account_ref_id: 'acct_new', subscription_name: 'pro-plan', tier_name: 'pro', email: 'new@example.com' },
    { signingKey: server.signingKey },
  );
  show('signed link', `${link.slice(0, 60)}…`);
  show('verifyHostedLink', (await verifyHostedLink(link, server.signingKey)).account_ref_id);
  const opened = await (await fetch(link)).json();
  show('hosted page opens for', opened.account_ref_id);
  const byId = await signHostedLink({
    appUrl: server.appUrl,
    productUrlId: 'pu_ebook',
    account_ref_id: 'acct_new',
    signingKey: server.signingKey,
  });
  show('from appUrl + productUrlId', `${byId.slice(0, 60)}…`);
  try {
    await verifyHostedLink(link, 'not-the-signing-key');
  } catch (err) {
    show('with the wrong key', `${err.name} (${err.code})`);
  }

  heading('Webhooks: the mock posts lifecycle events to a local receiver');
  const access = new Map();
  const receiver = createServer(
    createNodeWebhookHandler({
      onEvent: async (event) =>
        access.set(
          event.account_ref_id,
          await billing.accounts.isActive({ account_ref_id: event.account_ref_id }),
        ),
    }),
  );
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  server.webhooks.register(`http://127.0.0.1:${receiver.address().port}/`);
  const failed = await server.lifecycle.paymentFailed({ account_ref_id: 'acct_active' });
  await server.webhooks.redeliver(failed.event.transaction_id);
  show(
    `webhook ${failed.event.event}`,
    `processed once, access ${access.get('acct_active') ? 'granted' : 'revoked'}`,
  );
  const healed = await server.lifecycle.paymentSucceeded({ account_ref_id: 'acct_active' });
  show(
    `webhook ${healed.event.event}`,
    `delivered=${healed.delivered}, access ${access.get('acct_active') ? 'granted' : 'revoked'}`,
  );
  receiver.closeAllConnections();
  receiver.close();

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
  // Its own cooldown (withOptions clients share their parent's): the rest of the demo is not held.
  const limited = billing.withOptions({ maxRetryDelay: 10_000, cooldown: memoryCooldown() });
  for (const attempt of ['first call', 'during the cooldown']) {
    const sentBefore = server.requests.count();
    try {
      await limited.invoices.list({ account_ref_id: 'acct_active' });
    } catch (err) {
      if (!(err instanceof RateLimitError)) throw err;
      const sent = server.requests.count() - sentBefore;
      show(
        `${attempt}: ${err.name}`,
        `retry after ${Math.round(err.retryAfterMs / 1000)} s, ${sent} request${sent === 1 ? '' : 's'} sent`,
      );
    }
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
