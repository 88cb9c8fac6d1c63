import { describe, expect, it } from 'vitest';
import { DEMO, MockStore } from '../../src/testing/index.js';

describe('MockStore and the demo seed', () => {
  it('is deterministic: two stores hold identical data', () => {
    const snapshot = (store: MockStore) =>
      JSON.stringify({
        accounts: store.accounts(),
        invoices: store.invoices(),
        transactions: store.accounts().map((a) => store.transactions(a.account_ref_id)),
        subscriptions: store.accounts().map((a) => store.subscriptions(a.account_ref_id)),
        usage: store.usageEvents,
      });
    expect(snapshot(new MockStore())).toBe(snapshot(new MockStore()));
  });

  it('holds the documented accounts, counts and identifiers', () => {
    const store = new MockStore();
    expect(store.accounts().map((a) => a.account_ref_id)).toEqual(Object.values(DEMO.accounts));
    for (const [account, counts] of Object.entries(DEMO.counts)) {
      for (const [status, n] of Object.entries(counts.invoices)) {
        expect(store.invoices({ account_ref_id: account, status: status as 'paid' }).length).toBe(n);
      }
      for (const [status, n] of Object.entries(counts.transactions)) {
        expect(store.transactions(account, status as 'failed').length).toBe(n);
      }
    }
    expect(store.invoices({ account_ref_id: DEMO.accounts.active })).toHaveLength(45);
    expect(store.transactions(DEMO.accounts.active)).toHaveLength(30);
    expect(store.subscription(DEMO.subscriptions.pastDuePro)).toMatchObject({
      account_ref_id: DEMO.accounts.pastDue,
      is_active: false,
    });
    expect(store.invoice(DEMO.pastDueInvoiceId)).toMatchObject({
      status: 'open',
      processor_subscription_id: DEMO.subscriptions.pastDuePro,
    });
    expect(store.subscriptions(DEMO.accounts.multi).map((s) => s.subscription_id)).toEqual([
      DEMO.subscriptions.multiStarter,
      DEMO.subscriptions.multiEnterprise,
      DEMO.subscriptions.multiBasic,
    ]);
    expect(store.transactions(DEMO.accounts.active).at(-1)?.transaction_uuid).toBe(
      '00000000-0000-4000-8000-000000000001',
    );
    for (const tier of Object.values(DEMO.tiers)) {
      const product = store.productByLabel(tier.subscription_name, 'subscription');
      expect(store.tier(product?.manage_id ?? '', tier.label_name)?.tier_url_id).toBe(tier.tier_url_id);
    }
    for (const product of Object.values(DEMO.products)) {
      expect(store.product(product.manage_id)).toMatchObject(product);
    }
  });

  it('keeps every seeded timestamp in 2026', () => {
    const store = new MockStore();
    const stamps = [
      ...store.invoices().flatMap((i) => [i.invoice_date, i.due_date, i.created_at, i.updated_at]),
      ...store.accounts().flatMap((a) => store.transactions(a.account_ref_id).map((t) => t.created_at)),
      ...store.usageEvents.map((e) => e.timestamp),
    ];
    expect(stamps.length).toBeGreaterThan(100);
    expect(stamps.every((s) => /^2026-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(s))).toBe(true);
  });

  it('reset() restores the seed and restarts the id counters', () => {
    const store = new MockStore({ now: () => new Date('2026-06-01T00:00:00Z') });
    const created = store.addInvoice({
      account_ref_id: DEMO.accounts.empty,
      customer_email: DEMO.emails.empty,
      product_manage_id: DEMO.products.ebook.manage_id,
      amount_due: 19,
    });
    expect(created).toMatchObject({
      status: 'open',
      is_paid: false,
      amount_paid: 0,
      invoice_date: '2026-06-01T00:00:00Z',
      due_date: '2026-07-01T00:00:00Z',
      hosted_invoice_url: `/i/${created.processor_invoice_id}`,
    });
    store.setBalance(DEMO.accounts.active, 'ai-assistant', 'credits', 5);
    store.reset();
    expect(store.invoices({ account_ref_id: DEMO.accounts.empty })).toEqual([]);
    expect(store.balance(DEMO.accounts.active, 'ai-assistant', 'credits')).toBe(1000);
    const again = store.addInvoice({
      account_ref_id: DEMO.accounts.empty,
      customer_email: DEMO.emails.empty,
      product_manage_id: DEMO.products.ebook.manage_id,
      amount_due: 19,
    });
    expect(again.processor_invoice_id).toBe(created.processor_invoice_id);
  });

  it('supports lifecycle changes through its helpers', () => {
    const store = new MockStore();
    store.setSubscriptionActive(DEMO.subscriptions.pastDuePro, true);
    expect(store.subscription(DEMO.subscriptions.pastDuePro)?.is_active).toBe(true);
    const paid = store.setInvoiceStatus(DEMO.pastDueInvoiceId, 'paid');
    expect(paid).toMatchObject({ is_paid: true, amount_paid: paid.amount_due });
    expect(() =>
      store.addSubscription({
        account_ref_id: 'nobody',
        product_manage_id: 'prod_pro_plan',
        tier_label_name: 'pro',
        is_active: true,
      }),
    ).toThrow();
    const sub = store.addSubscription({
      account_ref_id: DEMO.accounts.empty,
      product_manage_id: 'prod_team_plan',
      tier_label_name: 'basic',
      is_active: true,
    });
    expect(sub.subscription_id).toBe('sub_mock_0006');
  });

  it('records usage immutably', () => {
    const store = new MockStore({ seed: 'empty' });
    const first = store.recordUsage({
      event_key: 'e',
      account_ref_id: 'a',
      product_code: 'p',
      meter_code: 'm',
      quantity: 3,
    });
    const again = store.recordUsage({
      event_key: 'e',
      account_ref_id: 'a',
      product_code: 'p',
      meter_code: 'm',
      quantity: 9,
    });
    expect(again).toBe(first);
    expect(store.usageTotal('a', 'p', 'm')).toBe(3);
  });
});
