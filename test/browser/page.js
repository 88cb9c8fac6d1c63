// Runs inside headless Chromium, on a page served from one loopback origin, against the mock on
// another (so every call crosses CORS as in a real browser app). Results go to window.__results.
import { BillingClient, signHostedLink, verifyHostedLink } from 'billing-sdk';

const params = new URLSearchParams(location.search);
const apiKey = params.get('key');
const baseUrl = params.get('api');
const results = {};
try {
  try {
    new BillingClient({ apiKey, baseUrl });
    results.guard = 'constructed without dangerouslyAllowBrowser';
  } catch (err) {
    results.guard = err.message;
  }

  const billing = new BillingClient({ apiKey, baseUrl, dangerouslyAllowBrowser: true });
  let invoices = 0;
  let pages = 0;
  for await (const page of billing.invoices.list({ account_ref_id: 'acct_active', page_size: 20 }).pages()) {
    pages++;
    invoices += page.results.length;
  }
  results.invoices = { invoices, pages };
  results.active = await billing.accounts.isActive({ account_ref_id: 'acct_active' });
  const status = await billing.accounts.status({ account_ref_id: 'acct_active' });
  results.tier = status.subscription_tier.label_name;
  const debit = await billing.usage.debit({
    account_ref_id: 'acct_active',
    product_code: 'ai-assistant',
    meter_code: 'credits',
    quantity: 3,
  });
  results.debit = {
    approved: debit.approved,
    remaining: debit.remaining_balance,
    keyLength: debit.event_key.length,
  };
  const link = await signHostedLink({
    appUrl: location.origin,
    productUrlId: 'pu_ebook',
    account_ref_id: 'acct_ü',
    signingKey: 'browser-key',
  });
  results.link = (await verifyHostedLink(link, 'browser-key')).account_ref_id;
  try {
    await verifyHostedLink(link, 'wrong-key');
    results.tampered = 'accepted';
  } catch (err) {
    results.tampered = err.code;
  }
  results.ok = true;
} catch (err) {
  results.error = `${err.name}: ${err.message}`;
}
window.__results = results;
