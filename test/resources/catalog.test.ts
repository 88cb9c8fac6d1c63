import { describe, expect, it } from 'vitest';
import { NotFoundError, tierFeatures } from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();
const billing = () => clientFor(mock.server);

describe('tiers.list', () => {
  it('lists every tier, ending on count (the envelope has no next)', async () => {
    const tiers = await billing().tiers.list({ page_size: 3 }).toArray();
    expect(tiers.map((t) => t.label_name).sort()).toEqual(['basic', 'enterprise', 'pro', 'starter']);
    expect(mock.server.requests.count()).toBe(2);
  });

  it("lists one subscription's tiers", async () => {
    const page = await billing().tiers.list({ subscription_name: 'pro-plan' });
    expect(page.results.map((t) => t.label_name)).toEqual(['starter', 'pro', 'enterprise']);
    expect(page.next).toBeNull();
    expect(page.hasNextPage()).toBe(false);
    expect(mock.server.requests.last()?.path).toBe('/api/tiers/pro-plan/');
    expect(tierFeatures(page.results[0]!).length).toBeGreaterThan(0);
  });

  it('throws NotFoundError for an unknown subscription', async () => {
    expect(await caught(() => billing().tiers.list({ subscription_name: 'nope' }))).toBeInstanceOf(
      NotFoundError,
    );
  });
});

describe('products.list', () => {
  it('returns one page of products, price only on single products', async () => {
    const products = [];
    for await (const product of billing().products.list()) products.push(product);
    expect(products.map((p) => p.label_name)).toContain('ebook');
    expect(products.find((p) => p.label_name === 'ebook')?.price).toBe('19.00');
    expect(products.find((p) => p.label_name === 'pro-plan')?.price).toBeUndefined();
    expect(mock.server.requests.count()).toBe(1);
    expect(mock.server.requests.last()?.query).toEqual({});
  });
});

describe('tierFeatures', () => {
  it('splits and trims the comma-separated string', () => {
    expect(tierFeatures({ features: 'API access, Priority support,,  SSO ' })).toEqual([
      'API access',
      'Priority support',
      'SSO',
    ]);
  });
});
