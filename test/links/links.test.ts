import { inspect } from 'node:util';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  BillingError,
  HostedLinkError,
  InvalidRequestError,
  signHostedLink,
  verifyHostedLink,
} from '../../src/index.js';
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

  it('keeps the page in the path when appUrl has a query or a fragment', async () => {
    const withQuery = await signHostedLink({
      appUrl: 'https://app.example.com/?ref=mail',
      productUrlId: 'prod_1',
      account_ref_id: 'a',
      signingKey,
    });
    expect(withQuery).toMatch(/^https:\/\/app\.example\.com\/p\/prod_1\?ref=mail&u=[\w-]+\.[\w-]+\.[\w-]+$/);
    const withFragment = await signHostedLink({
      appUrl: 'https://app.example.com/base/#pricing',
      tierUrlId: 'tu_9',
      account_ref_id: 'a',
      signingKey,
    });
    expect(withFragment).toMatch(/^https:\/\/app\.example\.com\/base\/t\/tu_9\?u=[\w.-]+#pricing$/);
    expect((await verifyHostedLink(withFragment, signingKey)).account_ref_id).toBe('a');
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)//https://app.example.com/',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    'ftp://app.example.com/p/x',
  ])('signs only http(s) links: %s is refused in url and appUrl', async (bad) => {
    const fromUrl = await caught(() => signHostedLink({ url: bad, account_ref_id: 'a', signingKey }));
    expect(fromUrl).toBeInstanceOf(InvalidRequestError);
    expect((fromUrl as InvalidRequestError).issues.map((i) => i.field)).toEqual(['url']);
    const fromApp = await caught(() =>
      signHostedLink({ appUrl: bad, productUrlId: 'p', account_ref_id: 'a', signingKey }),
    );
    expect(fromApp).toBeInstanceOf(InvalidRequestError);
    expect((fromApp as InvalidRequestError).issues.map((i) => i.field)).toEqual(['appUrl']);
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

  it('a link that does not parse carries no cause holding its ?u= token', async () => {
    const token = new URL(await valid()).searchParams.get('u')!;
    const err = await caught(() => verifyHostedLink(`http://[bad/p/x?u=${token}`, signingKey));
    expect(err).toBeInstanceOf(HostedLinkError);
    expect((err as HostedLinkError).code).toBe('invalid_token');
    expect(err.cause).toBeUndefined();
    for (const text of [
      String(err),
      err.stack ?? '',
      JSON.stringify(err),
      inspect(err, { depth: 10, showHidden: true }),
    ])
      expect(text).not.toContain(token);
  });

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

/** What `signHostedLink(params)` rejects with, checked to be an InvalidRequestError that hides the key. */
async function refusal(params: unknown): Promise<InvalidRequestError> {
  const err = await caught(() => signHostedLink(params as never));
  expect(err).toBeInstanceOf(InvalidRequestError);
  expect(JSON.stringify(err) + String(err)).not.toContain(signingKey);
  return err as InvalidRequestError;
}

const base = { url: 'https://a.example/p/x', account_ref_id: 'a', signingKey };
const seconds = async (link: string) => {
  const { claims } = await verifyHostedLink(link, signingKey);
  return claims.exp! - claims.iat!;
};

describe('signHostedLink expiresIn', () => {
  it.each<[string, unknown]>([
    ["'abc'", 'abc'],
    ["''", ''],
    ["'15' (no unit)", '15'],
    ["'15 minutes later'", '15 minutes later'],
    ["'1 month' (no month unit in jose)", '1 month'],
    ["'0s'", '0s'],
    ["'0.0h'", '0.0h'],
    ["'-1h'", '-1h'],
    ["'1h ago'", '1h ago'],
    ["'+1h ago'", '+1h ago'],
    ['a 400-digit span (Infinity seconds)', `${'9'.repeat(400)}s`],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['-5', -5],
    ['0', 0],
    ['-0', -0],
    ['null', null],
    ['true', true],
    ['{}', {}],
    ['[60]', [60]],
    ['10n', 10n],
    ['a symbol', Symbol('15m')],
    ['a function', () => 60],
  ])('refuses %s with an InvalidRequestError naming expiresIn', async (_label, expiresIn) => {
    const err = await refusal({ ...base, expiresIn });
    expect(err.issues).toEqual([{ field: 'expiresIn', message: expect.any(String) }]);
    expect(err.operation).toBe('signHostedLink');
  });

  it.each([
    ['15m', 900],
    ['2 hours', 7200],
    ['1.5h', 5400],
    ['1 year', 31_557_600],
    ['+1d', 86_400],
    ['1d from now', 86_400],
    ['3 WEEKS', 1_814_400],
    [' 15m', 900],
    [90, 90],
  ])('accepts %o as %i seconds, as jose reads it', async (expiresIn, expected) => {
    expect(await seconds(await signHostedLink({ ...base, expiresIn }))).toBe(expected);
    if (typeof expiresIn === 'string') {
      const jose = await new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt()
        .setExpirationTime(expiresIn)
        .sign(key);
      expect(decode(jose.split('.')[1]!).exp - decode(jose.split('.')[1]!).iat).toBe(expected);
    }
  });
});

describe('signHostedLink parameters of the wrong type', () => {
  it.each([[null], [undefined], ['https://a.example/p/x'], [5]])('refuses params %o', async (params) => {
    const fields = (await refusal(params)).issues.map((i) => i.field);
    expect(fields).toEqual(['account_ref_id', 'signingKey', 'url']);
  });

  it.each<[string, object, string]>([
    ['account_ref_id: 5', { account_ref_id: 5 }, 'account_ref_id'],
    ['account_ref_id: {}', { account_ref_id: {} }, 'account_ref_id'],
    ['signingKey: 5', { signingKey: 5 }, 'signingKey'],
    ['signingKey as bytes', { signingKey: new TextEncoder().encode(signingKey) }, 'signingKey'],
    ['url: 5', { url: 5 }, 'url'],
    ['url as a URL object', { url: new URL('https://a.example/p/x') }, 'url'],
    ['appUrl: {}', { url: undefined, appUrl: {}, productUrlId: 'p1' }, 'appUrl'],
    ['productUrlId: 5', { url: undefined, appUrl: 'https://a.example', productUrlId: 5 }, 'productUrlId'],
    ['tierUrlId: null', { url: undefined, appUrl: 'https://a.example', tierUrlId: null }, 'tierUrlId'],
    ['appUrl without a page id', { url: undefined, appUrl: 'https://a.example' }, 'productUrlId'],
    ['appUrl that is not a URL', { url: undefined, appUrl: 'not a url', tierUrlId: 't1' }, 'appUrl'],
  ])('refuses %s', async (_label, bad, field) => {
    expect((await refusal({ ...base, ...bad })).issues.map((i) => i.field)).toEqual([field]);
  });

  it('names every bad parameter at once', async () => {
    const err = await refusal({ url: 5, account_ref_id: 5, signingKey: '', expiresIn: 'soon' });
    expect(err.issues.map((i) => i.field)).toEqual(['account_ref_id', 'signingKey', 'url', 'expiresIn']);
  });

  it.each([
    ['account_ref_id', { account_ref_id: 'acct_\uD800' }],
    ['signingKey', { signingKey: `${signingKey}\uDC00` }],
    ['url', { url: 'https://a.example/p/\uD83D' }],
    ['productUrlId', { url: undefined, appUrl: 'https://a.example', productUrlId: 'p\uDFFF' }],
    ['appUrl', { url: undefined, appUrl: 'https://a.example/\uD800', tierUrlId: 't1' }],
  ])('refuses a lone UTF-16 surrogate in %s', async (field, bad) => {
    expect((await refusal({ ...base, ...bad })).issues.map((i) => i.field)).toEqual([field]);
  });

  it('keeps well-formed surrogate pairs (emoji) in ids and keys', async () => {
    const link = await signHostedLink({ ...base, account_ref_id: 'acct_🚀', signingKey: `${signingKey}🔑` });
    expect((await verifyHostedLink(link, `${signingKey}🔑`)).account_ref_id).toBe('acct_🚀');
  });
});

describe('verifyHostedLink input of any kind', () => {
  // No default for the key: `undefined` is one of the keys under test.
  const codeOf = async (input: unknown, k: unknown) => {
    const err = await caught(() => verifyHostedLink(input as never, k as never));
    expect(err).toBeInstanceOf(HostedLinkError);
    expect(err).toBeInstanceOf(BillingError);
    return (err as HostedLinkError).code;
  };

  it.each([
    ["'http://[bad?u=x' (new URL throws)", 'invalid_token', 'http://[bad?u=x'],
    ["'https://exa mple.com/?u=x'", 'invalid_token', 'https://exa mple.com/?u=x'],
    ["'a:'", 'missing_token', 'a:'],
    ['a link with an empty u', 'missing_token', 'https://a.example/p/x?u='],
    ["'x.y.z'", 'invalid_token', 'x.y.z'],
    ["'..'", 'invalid_token', '..'],
    ['a token with a lone surrogate', 'invalid_token', 'not-a-jwt\uD800'],
    ['a link with a lone surrogate', 'invalid_token', 'https://a.example/p/x?u=a.b.c&ref=\uDC00'],
  ])('%s → HostedLinkError %s', async (_label, code, input) => {
    expect(await codeOf(input, signingKey)).toBe(code);
  });

  it.each([
    [undefined],
    [null],
    [5],
    [{}],
    [['a.b.c']],
    [Symbol('t')],
    [new URL('https://a.example/?u=a.b.c').searchParams],
  ])('a non-string %o → HostedLinkError missing_token', async (input) => {
    expect(await codeOf(input, signingKey)).toBe('missing_token');
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ["''", ''],
    ['5', 5],
    ['{}', {}],
    ['a symbol', Symbol('k')],
    ['as bytes', key],
    ['with a lone surrogate', 'k\uD800'],
  ])('a signingKey %s → HostedLinkError invalid_token', async (_label, k) => {
    const link = await signHostedLink(base);
    expect(await codeOf(link, k)).toBe('invalid_token');
  });

  it('refuses a key with a lone surrogate even where TextEncoder makes it match the signing key', async () => {
    // TextEncoder turns the lone surrogate into U+FFFD: both keys would be the same bytes.
    const link = await signHostedLink({ ...base, signingKey: `${signingKey}\uFFFD` });
    expect(await codeOf(link, `${signingKey}\uD800`)).toBe('invalid_token');
  });
});
