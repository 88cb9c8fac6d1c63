import { describe, expect, it } from 'vitest';
import {
  InvalidRequestError,
  isMultipleStatus,
  NotFoundError,
  ResponseValidationError,
  subscriptionsOf,
} from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();
const billing = () => clientFor(mock.server);

describe('accounts.status', () => {
  it('returns the single form for one subscription', async () => {
    const status = await billing().accounts.status({ account_ref_id: 'acct_active' });
    expect(isMultipleStatus(status)).toBe(false);
    if (isMultipleStatus(status)) throw new Error('unreachable');
    expect(status.is_active).toBe(true);
    expect(status.subscription_tier.label_name).toBe('pro');
    expect(subscriptionsOf(status)).toHaveLength(1);
  });

  it('returns the multiple form for several subscriptions, and subscriptionsOf lists them', async () => {
    const status = await billing().accounts.status({ account_ref_id: 'acct_multi' });
    expect(isMultipleStatus(status)).toBe(true);
    const subs = subscriptionsOf(status);
    expect(subs).toHaveLength(3);
    expect(subs.filter((s) => s.is_active)).toHaveLength(2);
  });

  it('narrows to one subscription with the filter', async () => {
    const status = await billing().accounts.status({
      account_ref_id: 'acct_multi',
      subscription: 'pro-plan',
      tier: 'starter',
    });
    expect(isMultipleStatus(status)).toBe(false);
    expect(subscriptionsOf(status)[0]?.is_active).toBe(false);
    expect(mock.server.requests.last()?.query).toEqual({ subscription: 'pro-plan', tier: 'starter' });
  });

  it('refuses tier without subscription before sending', async () => {
    const err = (await caught(() =>
      billing().accounts.status({ account_ref_id: 'acct_multi', tier: 'pro' }),
    )) as InvalidRequestError;
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.issues).toEqual([{ field: 'tier', message: 'requires subscription' }]);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('throws NotFoundError for an unknown account', async () => {
    expect(await caught(() => billing().accounts.status({ account_ref_id: 'nobody' }))).toBeInstanceOf(
      NotFoundError,
    );
  });

  it('rejects a body that is neither form', async () => {
    mock.server.faults.add({ path: '/api/account/', status: 200, body: '{"account_ref_id":"acct_active"}' });
    expect(await caught(() => billing().accounts.status({ account_ref_id: 'acct_active' }))).toBeInstanceOf(
      ResponseValidationError,
    );
  });
});

describe('accounts.isActive', () => {
  it.each([
    [{ account_ref_id: 'acct_active' }, true],
    [{ account_ref_id: 'acct_past_due' }, false],
    [{ account_ref_id: 'acct_multi' }, true],
    [{ account_ref_id: 'acct_multi', subscription: 'pro-plan', tier: 'starter' }, false],
    [{ account_ref_id: 'acct_multi', subscription: 'team-plan' }, true],
    [{ account_ref_id: 'acct_empty' }, false],
    [{ account_ref_id: 'never-seen' }, false],
  ])('%o → %s', async (params, expected) => {
    expect(await billing().accounts.isActive(params)).toBe(expected);
  });

  it('answers false only for the documented not-found body, with the 404 in withResponse', async () => {
    const { data, response } = await billing()
      .accounts.isActive({ account_ref_id: 'never-seen' })
      .withResponse();
    expect(data).toBe(false);
    expect(response.status).toBe(404);
  });

  it.each([
    ['a proxy page (wrong baseUrl)', '<html>Not Found</html>'],
    ['another JSON body', '{"detail":"Not found."}'],
    ['an empty body', ''],
  ])('throws NotFoundError for any other 404: %s', async (_, body) => {
    mock.server.faults.add({ path: '/api/account/', status: 404, body });
    const err = await caught(() => billing().accounts.isActive({ account_ref_id: 'acct_active' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.message).toMatch(
      /^accounts\.isActive \(GET \/api\/account\/acct_active\/status\/\) failed with 404/,
    );
  });

  it('still throws errors other than 404', async () => {
    mock.server.faults.add({ path: '/api/account/', status: 500, times: 5 });
    const err = await caught(() =>
      billing().accounts.isActive({ account_ref_id: 'acct_active' }, { maxRetries: 0 }),
    );
    expect(err.name).toBe('InternalServerError');
  });
});

describe('accounts.fixSubscription', () => {
  const params = { subscription_name: 'pro-plan', tier_name: 'pro' };

  it('returns the payment url of a past-due subscription', async () => {
    const fix = await billing().accounts.fixSubscription({ account_ref_id: 'acct_past_due', ...params });
    expect(fix?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/i\//);
  });

  it('returns null for the empty body of an active subscription', async () => {
    expect(await billing().accounts.fixSubscription({ account_ref_id: 'acct_active', ...params })).toBeNull();
  });

  it('returns null for an empty JSON object too', async () => {
    mock.server.faults.add({ path: '/api/fix-subscription/', status: 200, body: '{}' });
    expect(
      await billing().accounts.fixSubscription({ account_ref_id: 'acct_past_due', ...params }),
    ).toBeNull();
  });

  it('needs subscription_name and tier_name', async () => {
    const err = (await caught(() =>
      billing().accounts.fixSubscription({
        account_ref_id: 'acct_past_due',
        subscription_name: 'pro-plan',
      } as never),
    )) as InvalidRequestError;
    expect(err.issues.map((i) => i.field)).toEqual(['tier_name']);
    expect(mock.server.requests.count()).toBe(0);
  });
});
