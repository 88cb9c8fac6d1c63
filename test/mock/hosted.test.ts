import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { DEMO } from '../../src/testing/index.js';
import { useMockServer } from '../helpers.js';

async function sign(claims: Record<string, unknown>, key: string, alg = 'HS256'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode(key));
}

describe('mock server: hosted pages', () => {
  const mock = useMockServer();

  const open = async (path: string, token?: string) => {
    const url = new URL(path, mock.server.appUrl);
    if (token !== undefined) url.searchParams.set('u', token);
    const r = await fetch(url);
    return { status: r.status, body: (await r.json()) as unknown };
  };

  it('accepts a product link signed with the signing key', async () => {
    const token = await sign({ account_ref_id: 'user 42/ü' }, mock.server.signingKey);
    const r = await open(`/p/${DEMO.products.ebook.product_url_id}`, token);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, account_ref_id: 'user 42/ü', page: 'product', id: 'pu_ebook' });
  });

  it('accepts a tier link, including one resolved through the API', async () => {
    const resolved = await fetch(
      `${mock.server.baseUrl}resolve/public-url/?account_ref_id=acct_active&subscription_name=pro-plan&tier_name=pro&email=a@b.c`,
      { headers: { authorization: `Bearer ${mock.server.apiKey}` } },
    );
    const { url } = (await resolved.json()) as { url: string };
    const link = new URL(url);
    link.searchParams.set('u', await sign({ account_ref_id: DEMO.accounts.active }, mock.server.signingKey));
    const r = await fetch(link);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      ok: true,
      account_ref_id: 'acct_active',
      page: 'tier',
      id: 'tu_pro_plan_pro',
    });
  });

  it.each([
    ['a missing token', undefined],
    ['garbage', 'not-a-jwt'],
  ])('answers 401 for %s', async (_, token) => {
    const r = await open('/p/pu_ebook', token);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'invalid token' });
  });

  it('answers 401 for a wrong key, another algorithm, an unsigned token or a missing claim', async () => {
    const tokens = [
      await sign({ account_ref_id: 'x' }, 'another-key'),
      await sign({ account_ref_id: 'x' }, mock.server.signingKey, 'HS512'),
      `${btoa(JSON.stringify({ alg: 'none' })).replace(/=+$/, '')}.${btoa(JSON.stringify({ account_ref_id: 'x' })).replace(/=+$/, '')}.`,
      await sign({ sub: 'x' }, mock.server.signingKey),
      await sign({ account_ref_id: 42 }, mock.server.signingKey),
    ];
    for (const token of tokens) {
      const r = await open('/t/tu_pro_plan_pro', token);
      expect(r.status, token).toBe(401);
    }
  });

  it('answers 404 for unknown page ids', async () => {
    const token = await sign({ account_ref_id: 'x' }, mock.server.signingKey);
    expect((await open('/p/pu_nope', token)).status).toBe(404);
    expect((await open('/t/tu_nope', token)).status).toBe(404);
  });
});
