import { describe, expect, it } from 'vitest';
import { DEMO, startMockServer } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';
import { client, obj } from './helpers.js';

const A = DEMO.accounts.active;
const AI = DEMO.products.aiAssistant.product_code;
const GW = DEMO.products.apiGateway.product_code;
const NOT_FOUND = { error: 'Account not found or invalid subscription tier' };
const REQUIRED = ['This field is required.'];

describe('mock server: entitlements and credits', () => {
  const mock = useMockServer();
  const api = client(mock);

  const balance = async (account: string = A) =>
    obj(
      (
        await api.get(
          `usage/credits/balance/?account_ref_id=${account}&product_code=${AI}&meter_code=credits`,
        )
      ).body,
    ).balance;
  const debit = (body: Record<string, unknown>) =>
    api.post('usage/credits/debit/', { account_ref_id: A, product_code: AI, meter_code: 'credits', ...body });

  it('checks entitlements and echoes the codes', async () => {
    const r = await api.get(
      `entitlements/check/?account_ref_id=${A}&product_code=${AI}&entitlement_code=export`,
    );
    expect(r.body).toEqual({
      account_ref_id: A,
      product_code: AI,
      entitlement_code: 'export',
      has_access: true,
    });
    const other = await api.get(
      `entitlements/check/?account_ref_id=${A}&product_code=${AI}&entitlement_code=sso`,
    );
    expect(obj(other.body).has_access).toBe(false);
    const empty = await api.get(
      `entitlements/check/?account_ref_id=${DEMO.accounts.empty}&product_code=${AI}&entitlement_code=export`,
    );
    expect(obj(empty.body).has_access).toBe(false);
  });

  it('validates entitlement queries and 404s unknown accounts', async () => {
    const r = await api.get('entitlements/check/?product_code=x');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ account_ref_id: REQUIRED, entitlement_code: REQUIRED });
    const unknown = await api.get(
      'entitlements/check/?account_ref_id=nobody&product_code=x&entitlement_code=y',
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(NOT_FOUND);
  });

  it('answers balances, 0 without a record', async () => {
    const r = await api.get(
      `usage/credits/balance/?account_ref_id=${A}&product_code=${AI}&meter_code=credits`,
    );
    expect(r.body).toEqual({ account_ref_id: A, product_code: AI, meter_code: 'credits', balance: 1000 });
    expect(await balance(DEMO.accounts.empty)).toBe(0);
    const missing = await api.get('usage/credits/balance/');
    expect(missing.body).toEqual({ account_ref_id: REQUIRED, product_code: REQUIRED, meter_code: REQUIRED });
    expect(
      (await api.get('usage/credits/balance/?account_ref_id=x&product_code=y&meter_code=z')).status,
    ).toBe(404);
  });

  it('debits credits and reports the remaining balance', async () => {
    const r = await debit({ quantity: 30, event_key: 'evt-1', metadata: { job: 'summarise' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ approved: true, debited: 30, remaining_balance: 970 });
    expect(await balance()).toBe(970);
    expect(mock.server.store.ledger.get('evt-1')).toMatchObject({
      quantity: 30,
      metadata: { job: 'summarise' },
    });
  });

  it('replays a known event_key with the original answer and moves nothing', async () => {
    await debit({ quantity: 30, event_key: 'evt-replay' });
    await debit({ quantity: 5, event_key: 'evt-other' });
    const replay = await debit({ quantity: 999, event_key: 'evt-replay' });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ approved: true, debited: 30, remaining_balance: 970 });
    expect(await balance()).toBe(965);
    expect(mock.server.store.ledger.size).toBe(2);
  });

  it('refuses insufficient credits with 402 by default and leaves the balance unchanged', async () => {
    const r = await debit({ quantity: 1001, event_key: 'evt-big' });
    expect(r.status).toBe(402);
    expect(r.body).toEqual({ approved: false, error_code: 'insufficient_credits', remaining_balance: 1000 });
    expect(await balance()).toBe(1000);
    // A refusal is not a ledger entry: after a top-up the same key can succeed.
    mock.server.store.setBalance(A, AI, 'credits', 2000);
    expect((await debit({ quantity: 1001, event_key: 'evt-big' })).body).toMatchObject({ approved: true });
  });

  it('refuses the wrong usage model or meter with 422 by default', async () => {
    for (const body of [
      { product_code: GW, meter_code: 'api_calls' },
      { meter_code: 'api_calls' },
      { product_code: 'nope' },
    ]) {
      const r = await debit({ quantity: 1, event_key: `evt-${JSON.stringify(body)}`, ...body });
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ approved: false, error_code: 'invalid_usage_model', remaining_balance: 0 });
    }
    expect(await balance()).toBe(1000);
  });

  it('validates debit bodies with a field map', async () => {
    const missing = await api.post('usage/credits/debit/', {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({
      account_ref_id: REQUIRED,
      product_code: REQUIRED,
      meter_code: REQUIRED,
      quantity: REQUIRED,
      event_key: REQUIRED,
    });
    for (const [quantity, message] of [
      [0, 'Ensure this value is greater than or equal to 1.'],
      [-3, 'Ensure this value is greater than or equal to 1.'],
      [1.5, 'A valid integer is required.'],
      ['2', 'A valid integer is required.'],
    ] as const) {
      const r = await debit({ quantity, event_key: 'evt-q' });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ quantity: [message] });
    }
    const blank = await debit({ quantity: 1, event_key: '', metadata: [1] });
    expect(blank.body).toEqual({
      event_key: ['This field may not be blank.'],
      metadata: ['Expected a JSON object.'],
    });
    const invalid = await api.post('usage/credits/debit/', 'not json');
    expect(invalid.body).toEqual({ non_field_errors: ['Invalid JSON.'] });
    expect(await balance()).toBe(1000);
  });

  it('answers 404 for a debit on an unknown account', async () => {
    const r = await debit({ account_ref_id: 'nobody', quantity: 1, event_key: 'evt-nobody' });
    expect(r.status).toBe(404);
    expect(r.body).toEqual(NOT_FOUND);
  });

  it('uses the configured refusal statuses', async () => {
    const other = await startMockServer({
      refusalStatus: { insufficientCredits: 200, invalidUsageModel: 400 },
    });
    try {
      const c = client(other);
      const base = { account_ref_id: A, product_code: AI, meter_code: 'credits' };
      const poor = await c.post('usage/credits/debit/', { ...base, quantity: 5000, event_key: 'k1' });
      expect(poor.status).toBe(200);
      expect(obj(poor.body).error_code).toBe('insufficient_credits');
      const wrong = await c.post('usage/events/', { ...base, quantity: 1, event_key: 'k2' });
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual({ accepted: false, error_code: 'invalid_usage_model' });
    } finally {
      await other.close();
    }
  });
});

describe('mock server: usage events and summary', () => {
  const mock = useMockServer();
  const api = client(mock);

  const record = (body: Record<string, unknown>) =>
    api.post('usage/events/', { account_ref_id: A, product_code: GW, meter_code: 'api_calls', ...body });
  const summary = async (query = '') => {
    const r = await api.get(
      `usage/summary/?account_ref_id=${A}&product_code=${GW}&meter_code=api_calls${query}`,
    );
    return r;
  };

  it('records an event once; a replay is idempotent and keeps the original quantity', async () => {
    const first = await record({ quantity: 7, event_key: 'u-1' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ accepted: true, recorded_quantity: 7, idempotent: false });
    const replay = await record({ quantity: 70, event_key: 'u-1' });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ accepted: true, recorded_quantity: 7, idempotent: true });
    expect(obj((await summary()).body).total_usage).toBe(DEMO.usage.total + 7);
    expect(mock.server.store.usageEvents.filter((e) => e.event_key === 'u-1')).toHaveLength(1);
  });

  it('refuses prepaid products and foreign meters with 422', async () => {
    for (const body of [{ product_code: AI, meter_code: 'credits' }, { meter_code: 'credits' }]) {
      const r = await record({ quantity: 1, event_key: `u-${JSON.stringify(body)}`, ...body });
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ accepted: false, error_code: 'invalid_usage_model' });
    }
    expect(obj((await summary()).body).total_usage).toBe(DEMO.usage.total);
  });

  it('accepts every postpaid usage model', async () => {
    for (const model of ['included_overage', 'tiered_usage', 'volume_usage'] as const) {
      mock.server.store.addProduct({
        manage_id: `prod_${model}`,
        label_name: model,
        title: model,
        type: 'single',
        product_code: model,
        product_url_id: `pu_${model}`,
        saas_only: false,
        saas_mode: false,
        usage_model: model,
        meters: ['units'],
      });
      const r = await record({
        product_code: model,
        meter_code: 'units',
        quantity: 2,
        event_key: `m-${model}`,
      });
      expect(r.body, model).toEqual({ accepted: true, recorded_quantity: 2, idempotent: false });
    }
  });

  it('validates event bodies and 404s unknown accounts', async () => {
    const r = await api.post('usage/events/', { quantity: 0 });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      account_ref_id: REQUIRED,
      product_code: REQUIRED,
      meter_code: REQUIRED,
      quantity: ['Ensure this value is greater than or equal to 1.'],
      event_key: REQUIRED,
    });
    const unknown = await record({ account_ref_id: 'nobody', quantity: 1, event_key: 'u-nobody' });
    expect(unknown.status).toBe(404);
  });

  it('sums seeded usage over inclusive ranges', async () => {
    const total = async (query: string) => obj((await summary(query)).body).total_usage;
    expect((await summary()).body).toEqual({
      account_ref_id: A,
      product_code: GW,
      meter_code: 'api_calls',
      total_usage: 2000,
    });
    expect(await total('&start=2026-01-01T00:00:00Z&end=2026-01-31T23:59:59Z')).toBe(350);
    expect(await total('&start=2026-02-01&end=2026-02-28T23:59:59Z')).toBe(650);
    expect(await total('&start=2026-03-10T00:00:00Z')).toBe(1000);
    expect(await total('&end=2026-01-05T10:00:00Z')).toBe(100);
    expect(await total('&start=2026-01-05T11:00:00%2B01:00&end=2026-01-05T10:00:00.000Z')).toBe(100);
    expect(await total('&start=2027-01-01T00:00:00Z')).toBe(0);
  });

  it('answers 0 for an account without usage', async () => {
    const r = await api.get(
      `usage/summary/?account_ref_id=${DEMO.accounts.empty}&product_code=${GW}&meter_code=api_calls`,
    );
    expect(obj(r.body).total_usage).toBe(0);
  });

  it('rejects unparsable dates and missing fields with a field map', async () => {
    const r = await summary('&start=yesterday&end=2026-13-45T00:00:00Z');
    expect(r.status).toBe(400);
    expect(Object.keys(obj(r.body)).sort()).toEqual(['end', 'start']);
    expect(obj(r.body).start).toEqual([expect.stringContaining('Datetime has wrong format')]);
    const missing = await api.get('usage/summary/?account_ref_id=x');
    expect(missing.body).toEqual({ product_code: REQUIRED, meter_code: REQUIRED });
    const unknown = await api.get('usage/summary/?account_ref_id=nobody&product_code=x&meter_code=y');
    expect(unknown.status).toBe(404);
  });
});
