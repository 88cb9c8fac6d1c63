import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client, obj, results } from './helpers.js';

describe('mock server: tiers and products', () => {
  const mock = useMockServer();
  const api = client(mock);

  it('lists every tier in a count/results envelope without links', async () => {
    const body = obj((await api.get('tiers/')).body);
    expect(Object.keys(body).sort()).toEqual(['count', 'results']);
    expect(body.count).toBe(4);
    const tiers = results(body);
    expect(tiers.map((t) => t.label_name)).toEqual(['starter', 'pro', 'enterprise', 'basic']);
    expect(Object.keys(tiers[0] ?? {}).sort()).toEqual(
      [
        'billing_cycle',
        'description',
        'features',
        'is_popular',
        'label_name',
        'name',
        'price',
        'product_manage_id',
      ].sort(),
    );
    expect(tiers.every((t) => t.billing_cycle === 'monthly')).toBe(true);
  });

  it('honours page and page_size on tiers while keeping the total count', async () => {
    const body = obj((await api.get('tiers/?page=2&page_size=3')).body);
    expect(body).toEqual({ count: 4, results: [expect.objectContaining({ label_name: 'basic' })] });
  });

  it('lists the tiers of one subscription product', async () => {
    const body = obj((await api.get('tiers/pro-plan/')).body);
    expect(body.count).toBe(3);
    expect(results(body).every((t) => t.product_manage_id === DEMO.products.proPlan.manage_id)).toBe(true);
    const team = obj((await api.get('tiers/team-plan/')).body);
    expect(results(team).map((t) => t.label_name)).toEqual(['basic']);
  });

  it('answers 404 for an unknown subscription and for a single product', async () => {
    for (const name of ['nope', 'ebook']) {
      const r = await api.get(`tiers/${name}/`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'Account not found or invalid subscription tier' });
    }
  });

  it('lists all products ordered by title, with count and results only', async () => {
    const body = obj((await api.get('products/?page=99&page_size=1')).body);
    expect(Object.keys(body).sort()).toEqual(['count', 'results']);
    expect(body.count).toBe(6);
    const products = results(body);
    expect(products.map((p) => p.label_name)).toEqual([
      'ai-assistant',
      'api-gateway',
      'consulting',
      'ebook',
      'pro-plan',
      'team-plan',
    ]);
    // Only the reference's Product fields: the catalog facts the mock runs on (product_code,
    // saas_only, usage_model, meters) are not part of the answer.
    expect(products.find((p) => p.label_name === 'ebook')).toEqual({
      manage_id: 'prod_ebook',
      label_name: 'ebook',
      type: 'single',
      price: '19.00',
    });
    expect(products.find((p) => p.label_name === 'pro-plan')).toEqual({
      manage_id: 'prod_pro_plan',
      label_name: 'pro-plan',
      type: 'subscription',
    });
    expect(products.find((p) => p.label_name === 'ai-assistant')).toEqual({
      manage_id: 'prod_ai_assistant',
      label_name: 'ai-assistant',
      type: 'single',
    });
  });
});
