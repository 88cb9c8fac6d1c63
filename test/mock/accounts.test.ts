import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client, obj } from './helpers.js';

const NOT_FOUND = { error: 'Account not found or invalid subscription tier' };

describe('mock server: account status', () => {
  const mock = useMockServer();
  const api = client(mock);

  it('answers the single form for an account with one subscription', async () => {
    const r = await api.get(`account/${DEMO.accounts.active}/status/`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      account_ref_id: 'acct_active',
      is_active: true,
      customer_email: 'active@example.com',
      created_at: '2026-01-02T09:00:00Z',
      updated_at: '2026-01-02T09:00:00Z',
      subscription_tier: {
        label_name: 'pro',
        name: 'Pro',
        description: 'For growing teams',
        price: '29.00',
        billing_cycle: 'monthly',
        features: 'Unlimited projects, Priority support, Exports',
        is_popular: true,
        product_manage_id: 'prod_pro_plan',
      },
    });
  });

  it('answers the multiple form for an account with several subscriptions', async () => {
    const body = obj((await api.get(`account/${DEMO.accounts.multi}/status/`)).body);
    expect(Object.keys(body).sort()).toEqual(
      ['account_ref_id', 'customer_email', 'subscriptions', 'total_subscriptions'].sort(),
    );
    expect(body.total_subscriptions).toBe(3);
    const subscriptions = body.subscriptions as Record<string, unknown>[];
    expect(subscriptions.map((s) => s.is_active)).toEqual([false, true, true]);
    expect(subscriptions.map((s) => obj(s.subscription_tier).label_name)).toEqual([
      'starter',
      'enterprise',
      'basic',
    ]);
    expect(Object.keys(subscriptions[0] ?? {}).sort()).toEqual(
      ['created_at', 'is_active', 'subscription_tier', 'updated_at'].sort(),
    );
  });

  it('filters by subscription (and tier) into the single form', async () => {
    const team = obj((await api.get(`account/${DEMO.accounts.multi}/status/?subscription=team-plan`)).body);
    expect(team.is_active).toBe(true);
    expect(obj(team.subscription_tier).label_name).toBe('basic');
    // Two pro-plan subscriptions: without a tier the active one is the account's state.
    const pro = obj((await api.get(`account/${DEMO.accounts.multi}/status/?subscription=pro-plan`)).body);
    expect(pro.is_active).toBe(true);
    expect(obj(pro.subscription_tier).label_name).toBe('enterprise');
    const starter = obj(
      (await api.get(`account/${DEMO.accounts.multi}/status/?subscription=pro-plan&tier=starter`)).body,
    );
    expect(starter.is_active).toBe(false);
    expect(obj(starter.subscription_tier).label_name).toBe('starter');
  });

  it('answers 404 when the filter matches nothing', async () => {
    for (const query of [
      'subscription=team-plan',
      'subscription=pro-plan&tier=starter',
      'subscription=nope',
    ]) {
      const r = await api.get(`account/${DEMO.accounts.active}/status/?${query}`);
      expect(r.status, query).toBe(404);
      expect(r.body).toEqual(NOT_FOUND);
    }
  });

  it('ignores tier without subscription', async () => {
    const body = obj((await api.get(`account/${DEMO.accounts.multi}/status/?tier=starter`)).body);
    expect(body.total_subscriptions).toBe(3);
  });

  it('answers 404 for an unknown account and for an account without subscriptions', async () => {
    for (const id of ['acct_nobody', DEMO.accounts.empty]) {
      const r = await api.get(`account/${id}/status/`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual(NOT_FOUND);
    }
  });

  it('reports past-due as inactive', async () => {
    const body = obj((await api.get(`account/${DEMO.accounts.pastDue}/status/`)).body);
    expect(body.is_active).toBe(false);
  });
});

describe('mock server: fix-subscription', () => {
  const mock = useMockServer();
  const api = client(mock);

  const fix = (account: string, subscription = 'pro-plan', tier = 'pro') =>
    api.get(
      `fix-subscription/?account_ref_id=${account}&subscription_name=${subscription}&tier_name=${tier}`,
    );

  it('returns the hosted URL of the past-due invoice', async () => {
    const r = await fix(DEMO.accounts.pastDue);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ url: `${mock.server.appUrl}/i/${DEMO.pastDueInvoiceId}` });
    // The hosted invoice page exists on the mock.
    const page = await fetch(String(obj(r.body).url));
    expect(page.status).toBe(200);
    expect(obj(await page.json())).toMatchObject({ id: DEMO.pastDueInvoiceId, status: 'open' });
  });

  it('answers 200 with a zero-byte body when the subscription is active', async () => {
    const r = await fix(DEMO.accounts.active);
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers.get('content-length')).toBe('0');
  });

  it('answers an empty body once the invoice is no longer open', async () => {
    mock.server.store.setInvoiceStatus(DEMO.pastDueInvoiceId, 'paid');
    const r = await fix(DEMO.accounts.pastDue);
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
  });

  it('lists every missing field', async () => {
    const r = await api.get('fix-subscription/');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      account_ref_id: ['This field is required.'],
      subscription_name: ['This field is required.'],
      tier_name: ['This field is required.'],
    });
    const partial = await api.get(`fix-subscription/?account_ref_id=x&subscription_name=pro-plan`);
    expect(partial.body).toEqual({ tier_name: ['This field is required.'] });
  });

  it('answers 404 for an unknown account or a subscription the account does not have', async () => {
    for (const r of [await fix('acct_nobody'), await fix(DEMO.accounts.pastDue, 'pro-plan', 'starter')]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual(NOT_FOUND);
    }
  });
});
