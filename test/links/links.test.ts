import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { HostedLinkError, InvalidRequestError, signHostedLink, verifyHostedLink } from '../../src/index.js';
import { caught } from '../helpers.js';

const signingKey = 'gateway-signing-key-for-tests';
const key = new TextEncoder().encode(signingKey);
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

describe('signHostedLink', () => {
  it('signs an HS256 JWT with account_ref_id and no exp, set as u', async () => {
    const link = await signHostedLink({
      url: 'https://app.example.com/p/pu_ebook',
      account_ref_id: 'acct_1',
      signingKey,
    });
    const token = new URL(link).searchParams.get('u')!;
    const [header, payload] = token.split('.');
    expect(decode(header!)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(decode(payload!)).toMatchObject({ account_ref_id: 'acct_1' });
    expect(decode(payload!).exp).toBeUndefined();
    expect(link.startsWith('https://app.example.com/p/pu_ebook?u=')).toBe(true);
  });

  it('round-trips unicode account ids', async () => {
    const id = 'org/Zürich 東京 🚀?&=';
    const link = await signHostedLink({
      url: 'https://app.example.com/t/tu_1',
      account_ref_id: id,
      signingKey,
    });
    expect((await verifyHostedLink(link, signingKey)).account_ref_id).toBe(id);
  });

  it('replaces an existing u and keeps the other query parameters', async () => {
    const link = await signHostedLink({
      url: 'https://app.example.com/p/pu_ebook?ref=mail&u=old.token.here&lang=de#plans',
      account_ref_id: 'acct_1',
      signingKey,
    });
    const url = new URL(link);
    expect(url.searchParams.getAll('u')).toHaveLength(1);
    expect(url.searchParams.get('u')).not.toBe('old.token.here');
    expect(url.searchParams.get('ref')).toBe('mail');
    expect(url.searchParams.get('lang')).toBe('de');
    expect(url.hash).toBe('#plans');
    expect((await verifyHostedLink(link, signingKey)).account_ref_id).toBe('acct_1');
  });

  it('builds /p/<id> and /t/<id> from appUrl', async () => {
    const p = await signHostedLink({
      appUrl: 'https://app.example.com/',
      productUrlId: 'pu 1',
      account_ref_id: 'a',
      signingKey,
    });
    expect(p).toMatch(/^https:\/\/app\.example\.com\/p\/pu%201\?u=/);
    const t = await signHostedLink({
      appUrl: 'https://app.example.com/base',
      tierUrlId: 'tu_9',
      account_ref_id: 'a',
      signingKey,
    });
    expect(t).toMatch(/^https:\/\/app\.example\.com\/base\/t\/tu_9\?u=/);
  });

  it('adds exp only when asked', async () => {
    const link = await signHostedLink({
      url: 'https://a.example/p/x',
      account_ref_id: 'a',
      signingKey,
      expiresIn: 60,
    });
    const { claims } = await verifyHostedLink(link, signingKey);
    expect(claims.exp! - claims.iat!).toBe(60);
  });

  it.each([
    [{ signingKey: '' }, 'signingKey'],
    [{ account_ref_id: '' }, 'account_ref_id'],
    [{ url: undefined }, 'url'],
    [{ url: 'not a url' }, 'url'],
  ])('refuses %o', async (bad, field) => {
    const err = (await caught(() =>
      signHostedLink({
        url: 'https://a.example/p/x',
        account_ref_id: 'a',
        signingKey,
        ...(bad as object),
      } as never),
    )) as InvalidRequestError;
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.issues.map((i) => i.field)).toEqual([field]);
  });

  it('never puts the signing key in the link or the error', async () => {
    const link = await signHostedLink({ url: 'https://a.example/p/x', account_ref_id: 'a', signingKey });
    expect(link).not.toContain(signingKey);
    const err = await caught(() => signHostedLink({ account_ref_id: 'a', signingKey } as never));
    expect(JSON.stringify(err) + String(err)).not.toContain(signingKey);
  });
});

describe('verifyHostedLink', () => {
  const valid = () => signHostedLink({ url: 'https://a.example/p/x', account_ref_id: 'acct_1', signingKey });

  it('accepts a bare token as well as a URL', async () => {
    const token = new URL(await valid()).searchParams.get('u')!;
    expect((await verifyHostedLink(token, signingKey)).account_ref_id).toBe('acct_1');
  });

  const code = async (input: string, k = signingKey) =>
    ((await caught(() => verifyHostedLink(input, k))) as HostedLinkError).code;

  it('rejects a wrong key', async () => {
    expect(await code(await valid(), 'another-key')).toBe('invalid_signature');
  });

  it('rejects a tampered payload', async () => {
    const token = new URL(await valid()).searchParams.get('u')!;
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ account_ref_id: 'acct_admin' })).toString('base64url');
    expect(await code(`${h}.${forged}.${s}`)).toBe('invalid_signature');
  });

  it('rejects alg: none', async () => {
    const h = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const p = Buffer.from(JSON.stringify({ account_ref_id: 'acct_admin' })).toString('base64url');
    const err = await caught(() => verifyHostedLink(`${h}.${p}.`, signingKey));
    expect(err).toBeInstanceOf(HostedLinkError);
    expect((err as HostedLinkError).code).toBe('unsupported_algorithm');
  });

  it('rejects another HMAC algorithm signed with the same secret (algorithm confusion)', async () => {
    const hs512 = await new SignJWT({ account_ref_id: 'acct_1' })
      .setProtectedHeader({ alg: 'HS512' })
      .sign(key);
    expect(await code(hs512)).toBe('unsupported_algorithm');
  });

  it('rejects an expired token, a token without account_ref_id, and garbage', async () => {
    const expired = await new SignJWT({ account_ref_id: 'a' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(1)
      .sign(key);
    expect(await code(expired)).toBe('expired');
    const anonymous = await new SignJWT({ sub: 'a' }).setProtectedHeader({ alg: 'HS256' }).sign(key);
    expect(await code(anonymous)).toBe('missing_claim');
    expect(await code('not-a-jwt')).toBe('invalid_token');
    expect(await code('https://a.example/p/x')).toBe('missing_token');
  });
});
