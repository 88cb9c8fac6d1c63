import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type BillingClient, Page, VERSION, type WithResponse } from '../../src/index.js';
import { clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();

const acct = 'acct_active';
const credits = { account_ref_id: acct, product_code: 'ai-assistant', meter_code: 'credits' };
const calls = { account_ref_id: acct, product_code: 'api-gateway', meter_code: 'api_calls' };

/** Every method, called the way the demo seed answers. */
const everyMethod: [string, (b: BillingClient) => { withResponse(): Promise<WithResponse<unknown>> }][] = [
  ['transactions.list', (b) => b.transactions.list({ account_ref_id: acct })],
  ['accounts.status', (b) => b.accounts.status({ account_ref_id: acct })],
  ['accounts.isActive', (b) => b.accounts.isActive({ account_ref_id: acct })],
  [
    'accounts.fixSubscription',
    (b) =>
      b.accounts.fixSubscription({
        account_ref_id: 'acct_past_due',
        subscription_name: 'pro-plan',
        tier_name: 'pro',
      }),
  ],
  ['tiers.list', (b) => b.tiers.list()],
  ['products.list', (b) => b.products.list()],
  [
    'invoices.create',
    (b) =>
      b.invoices.create({
        product_manage_id: 'prod_consulting',
        amount: 250,
        customer_email: 'a@example.com',
      }),
  ],
  ['invoices.list', (b) => b.invoices.list({ account_ref_id: acct })],
  [
    'resolve.publicUrl',
    (b) => b.resolve.publicUrl({ account_ref_id: acct, product_name: 'ebook', email: 'a@example.com' }),
  ],
  [
    'resolve.signedUrl',
    (b) =>
      b.resolve.signedUrl(
        { account_ref_id: acct, product_name: 'ebook', email: 'a@example.com' },
        { signingKey: mock.server.signingKey },
      ),
  ],
  [
    'entitlements.check',
    (b) =>
      b.entitlements.check({
        account_ref_id: acct,
        product_code: 'ai-assistant',
        entitlement_code: 'export',
      }),
  ],
  ['usage.balance', (b) => b.usage.balance(credits)],
  ['usage.debit', (b) => b.usage.debit({ ...credits, quantity: 1 })],
  ['usage.record', (b) => b.usage.record({ ...calls, quantity: 1 })],
  ['usage.summary', (b) => b.usage.summary(calls)],
];

describe('.withResponse() on every method', () => {
  it.each(everyMethod)('%s gives the data and the response it came from', async (_, call) => {
    const billing = clientFor(mock.server);
    const { data, response } = await call(billing).withResponse();
    const awaited = await (call(billing) as unknown as Promise<unknown>);
    expect(data).not.toBeUndefined();
    expect(typeof data).toBe(typeof awaited);
    if (data instanceof Page) expect(awaited).toBeInstanceOf(Page);
    expect(response.status).toBeGreaterThanOrEqual(200);
    expect(response.status).toBeLessThan(300);
    expect(response.headers['content-type']).toContain('application/json');
    expect(response.requestId).toMatch(/\S/);
    expect(mock.server.requests.all().map((r) => r.requestId)).toContain(response.requestId);
  });

  it('a refusal carried by a 402 shows its status', async () => {
    const { data, response } = await clientFor(mock.server)
      .usage.debit({ ...credits, quantity: 99_999 })
      .withResponse();
    expect(data.approved).toBe(false);
    expect(response.status).toBe(402);
  });

  it('a single call is a real Promise (Promise.all, instanceof), and awaiting twice sends once', async () => {
    const call = clientFor(mock.server).usage.balance(credits);
    expect(call).toBeInstanceOf(Promise);
    const [a, b] = await Promise.all([call, call]);
    expect(a).toEqual(b);
    expect((await call.withResponse()).data).toEqual(a);
    expect(mock.server.requests.count()).toBe(1);
  });
});

describe('what every request carries', () => {
  it(`user-agent: billing-sdk/<version> node/<version>`, async () => {
    await clientFor(mock.server).usage.balance(credits);
    expect(mock.server.requests.last()?.headers['user-agent']).toBe(
      `billing-sdk/${VERSION} node/${process.versions.node}`,
    );
  });

  it('VERSION is the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(VERSION).toBe(pkg.version);
  });
});
