import { describe, expect, it } from 'vitest';
import { type InvalidRequestError, NotFoundError } from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();
const billing = () => clientFor(mock.server);

describe('entitlements.check', () => {
  it('answers has_access with the echoed codes', async () => {
    const granted = await billing().entitlements.check({
      account_ref_id: 'acct_active',
      product_code: 'ai-assistant',
      entitlement_code: 'export',
    });
    expect(granted).toEqual({
      account_ref_id: 'acct_active',
      product_code: 'ai-assistant',
      entitlement_code: 'export',
      has_access: true,
    });
    const denied = await billing().entitlements.check({
      account_ref_id: 'acct_active',
      product_code: 'ai-assistant',
      entitlement_code: 'admin',
    });
    expect(denied.has_access).toBe(false);
  });

  it('needs all three codes before sending', async () => {
    const err = (await caught(() =>
      billing().entitlements.check({ account_ref_id: 'acct_active' } as never),
    )) as InvalidRequestError;
    expect(err.issues.map((i) => i.field)).toEqual(['product_code', 'entitlement_code']);
    expect(mock.server.requests.count()).toBe(0);
  });

  it('throws NotFoundError for an unknown account', async () => {
    const err = await caught(() =>
      billing().entitlements.check({
        account_ref_id: 'nobody',
        product_code: 'ai-assistant',
        entitlement_code: 'export',
      }),
    );
    expect(err).toBeInstanceOf(NotFoundError);
  });
});
