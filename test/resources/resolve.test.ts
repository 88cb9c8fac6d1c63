import { describe, expect, it } from 'vitest';
import { BadRequestError, InvalidRequestError, NotFoundError, verifyHostedLink } from '../../src/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';

const mock = useMockServer();
const billing = () => clientFor(mock.server);
const tier = {
  account_ref_id: 'acct_new',
  subscription_name: 'pro-plan',
  tier_name: 'pro',
  email: 'new@example.com',
};

describe('resolve.publicUrl', () => {
  it('returns the url of shape A (public_url) for a product', async () => {
    const { url, response } = await billing().resolve.publicUrl({
      account_ref_id: 'acct_new',
      product_name: 'ebook',
      email: 'new@example.com',
    });
    expect(url).toBe(`${mock.server.appUrl}/p/pu_ebook`);
    expect(response).toEqual({ public_url: url });
  });

  it('returns the url of shape B (type redirect) for a tier', async () => {
    const { url, response } = await billing().resolve.publicUrl(tier);
    expect(url).toBe(`${mock.server.appUrl}/t/tu_pro_plan_pro`);
    expect(response).toEqual({ type: 'redirect', url });
  });

  it('keeps a url that already carries ?u= as it is', async () => {
    mock.server.faults.add({
      path: '/api/resolve/',
      status: 200,
      body: '{"public_url":"https://app.example.com/p/x?u=abc.def.ghi"}',
    });
    const { url } = await billing().resolve.publicUrl(tier);
    expect(url).toBe('https://app.example.com/p/x?u=abc.def.ghi');
  });

  it.each([
    [{ account_ref_id: 'a' }, 'product_name', 'or both subscription_name and tier_name are required'],
    [
      { account_ref_id: 'a', product_name: 'ebook', tier_name: 'pro' },
      'product_name',
      'excludes subscription_name and tier_name',
    ],
    [
      { account_ref_id: 'a', subscription_name: 'pro-plan', email: 'e@x.io' },
      'tier_name',
      'is required with subscription_name',
    ],
    [
      { account_ref_id: 'a', tier_name: 'pro', email: 'e@x.io' },
      'subscription_name',
      'is required with tier_name',
    ],
    [
      { account_ref_id: 'a', subscription_name: 'pro-plan', tier_name: 'pro' },
      'email',
      'is required with subscription_name and tier_name',
    ],
    [{ product_name: 'ebook' }, 'account_ref_id', 'is required'],
  ])('refuses %o before sending', async (params, field, message) => {
    const err = (await caught(() => billing().resolve.publicUrl(params as never))) as InvalidRequestError;
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.issues).toContainEqual({ field, message });
    expect(mock.server.requests.count()).toBe(0);
  });

  it('a product that is not saas_only answers 404', async () => {
    const err = (await caught(() =>
      billing().resolve.publicUrl({ account_ref_id: 'a', product_name: 'consulting' }),
    )) as NotFoundError;
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.error).toBe('Product not found');
  });

  it('a saas_only product without email is refused by the server (the client cannot know saas_only)', async () => {
    const err = (await caught(() =>
      billing().resolve.publicUrl({ account_ref_id: 'a', product_name: 'ebook' }),
    )) as BadRequestError;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.fields).toEqual({ error: ['email is required when using a saas_only product'] });
  });

  it('unknown subscription and tier answer their own 404 messages', async () => {
    const sub = (await caught(() =>
      billing().resolve.publicUrl({ ...tier, subscription_name: 'nope' }),
    )) as NotFoundError;
    expect(sub.error).toBe('Subscription product not found');
    const t = (await caught(() =>
      billing().resolve.publicUrl({ ...tier, tier_name: 'nope' }),
    )) as NotFoundError;
    expect(t.error).toBe('Subscription tier not found');
  });
});

describe('resolve.signedUrl', () => {
  it('resolves, then signs for the account: the hosted page accepts the token', async () => {
    const link = await billing().resolve.signedUrl(tier, { signingKey: mock.server.signingKey });
    expect(link).toMatch(/\/t\/tu_pro_plan_pro\?u=/);
    expect((await verifyHostedLink(link, mock.server.signingKey)).account_ref_id).toBe('acct_new');
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(await page.json()).toMatchObject({ ok: true, account_ref_id: 'acct_new', page: 'tier' });
  });

  it('needs a signing key, before sending', async () => {
    const err = await caught(() => billing().resolve.signedUrl(tier, { signingKey: '' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(mock.server.requests.count()).toBe(0);
  });

  it.each([
    'javascript:alert(document.cookie)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
  ])('never signs a link of another scheme than http(s) from the service: %s', async (url) => {
    for (const body of [{ public_url: url }, { type: 'redirect', url }]) {
      mock.server.faults.add({ path: '/api/resolve/public-url/', status: 200, body: JSON.stringify(body) });
      const err = await caught(() =>
        billing().resolve.signedUrl(tier, { signingKey: mock.server.signingKey }),
      );
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).issues).toEqual([
        { field: 'url', message: 'must be an http: or https: URL' },
      ]);
      expect(err.message).not.toContain(url);
    }
  });
});
