import { describe, expect, it } from 'vitest';
import { DEMO, RESOLVE_ERRORS, startMockServer } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client } from './helpers.js';

describe('mock server: resolve/public-url', () => {
  const mock = useMockServer();
  const api = client(mock);

  const resolve = (query: string) => api.get(`resolve/public-url/?${query}`);

  it('resolves a saas_only product to shape A', async () => {
    const r = await resolve('account_ref_id=future_user&product_name=ebook&email=a@example.com');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ public_url: `${mock.server.appUrl}/p/${DEMO.products.ebook.product_url_id}` });
  });

  it('resolves a saas_only subscription tier to shape B', async () => {
    const r = await resolve(
      'account_ref_id=acct_active&subscription_name=pro-plan&tier_name=enterprise&email=a@b.c',
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      type: 'redirect',
      url: `${mock.server.appUrl}/t/${DEMO.tiers.proEnterprise.tier_url_id}`,
    });
  });

  it('requires account_ref_id as a field', async () => {
    const r = await resolve('product_name=ebook&email=a@b.c');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ account_ref_id: ['This field is required.'] });
  });

  it.each([
    ['neither product nor subscription', 'account_ref_id=x', 400, RESOLVE_ERRORS.mode],
    [
      'subscription without tier',
      'account_ref_id=x&subscription_name=pro-plan&email=a@b.c',
      400,
      RESOLVE_ERRORS.mode,
    ],
    ['tier without subscription', 'account_ref_id=x&tier_name=pro&email=a@b.c', 400, RESOLVE_ERRORS.mode],
    [
      'product with subscription',
      'account_ref_id=x&product_name=ebook&subscription_name=pro-plan',
      400,
      RESOLVE_ERRORS.mode,
    ],
    [
      'product with tier',
      'account_ref_id=x&product_name=ebook&tier_name=pro&email=a@b.c',
      400,
      RESOLVE_ERRORS.mode,
    ],
    [
      'unknown product',
      'account_ref_id=x&product_name=nope&email=a@b.c',
      404,
      RESOLVE_ERRORS.productNotFound,
    ],
    [
      'product not saas_only',
      'account_ref_id=x&product_name=consulting&email=a@b.c',
      404,
      RESOLVE_ERRORS.productNotFound,
    ],
    [
      'saas_only product without email',
      'account_ref_id=x&product_name=ebook',
      400,
      RESOLVE_ERRORS.emailForProduct,
    ],
    [
      'subscription and tier without email',
      'account_ref_id=x&subscription_name=pro-plan&tier_name=pro',
      400,
      RESOLVE_ERRORS.emailForTier,
    ],
    [
      'unknown subscription',
      'account_ref_id=x&subscription_name=nope&tier_name=pro&email=a@b.c',
      404,
      RESOLVE_ERRORS.subscriptionNotFound,
    ],
    [
      'subscription not saas_only',
      'account_ref_id=x&subscription_name=team-plan&tier_name=basic&email=a@b.c',
      404,
      RESOLVE_ERRORS.subscriptionNotFound,
    ],
    [
      'unknown tier',
      'account_ref_id=x&subscription_name=pro-plan&tier_name=nope&email=a@b.c',
      404,
      RESOLVE_ERRORS.tierNotFound,
    ],
  ])('%s → %i {"error": ...}', async (_, query, status, message) => {
    const r = await resolve(query);
    expect(r.status).toBe(status);
    expect(r.body).toEqual({ error: message });
  });

  it('uses the documented error texts', () => {
    expect(Object.values(RESOLVE_ERRORS)).toEqual([
      'Provide product_name or both subscription_name and tier_name',
      'Product not found',
      'email is required when using subscription_name and tier_name',
      'email is required when using a saas_only product',
      'Subscription product not found',
      'Subscription tier not found',
    ]);
  });

  it('builds links on options.appUrl when given', async () => {
    const other = await startMockServer({ appUrl: 'https://app.example.test/' });
    try {
      expect(other.appUrl).toBe('https://app.example.test');
      const r = await client(other).get(
        'resolve/public-url/?account_ref_id=x&product_name=ebook&email=a@b.c',
      );
      expect(r.body).toEqual({ public_url: 'https://app.example.test/p/pu_ebook' });
    } finally {
      await other.close();
    }
  });
});
