import fc from 'fast-check';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BillingError,
  HostedLinkError,
  InvalidRequestError,
  signHostedLink,
  verifyHostedLink,
} from '../../src/index.js';
import { isWellFormed } from '../../src/util/well-formed.js';
import { anything, binaryString } from '../arbitraries.js';

// Whatever a caller passes, the link functions answer with a result or the SDK's own error: never a
// TypeError from jose, `new URL` or `TextEncoder` that a caller's `instanceof BillingError` misses.

const unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => void process.on('unhandledRejection', recordUnhandled));
afterAll(() => {
  process.off('unhandledRejection', recordUnhandled);
  expect(unhandled).toEqual([]);
});

const runs = { numRuns: 200 };
const signingKey = 'gateway-signing-key-for-properties';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A good value most of the time, and otherwise anything. */
const mostly = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof(
    { arbitrary: good, weight: 3 },
    { arbitrary: binaryString, weight: 1 },
    { arbitrary: anything, weight: 1 },
  );

/** Keys carry a marker, so an error that echoes one is found without false alarms from short keys. */
const key = fc.string({ unit: 'grapheme', minLength: 1 }).map((s) => `sk_${s}`);
const expiresIn = fc.oneof(
  fc.integer({ min: 1, max: 10 ** 9 }),
  fc.double(),
  fc.constantFrom('15m', '2 hours', '1.5d', '+1w', '1y from now', 'abc', '-1h', '1h ago', '0s', ''),
  fc
    .tuple(
      fc.constantFrom('', '+', '-'),
      fc.nat(),
      fc.constantFrom('s', 'm', 'h', 'd', 'w', 'y', 'mins', 'x'),
    )
    .map(([sign, n, unit]) => `${sign}${n}${unit}`),
  binaryString,
  anything,
);
const signParams = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        url: mostly(fc.webUrl({ withQueryParameters: true, withFragments: true })),
        appUrl: mostly(fc.webUrl()),
        productUrlId: mostly(fc.string()),
        tierUrlId: mostly(fc.string()),
        account_ref_id: mostly(fc.string({ minLength: 1 })),
        signingKey: mostly(key),
        expiresIn,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: anything },
);

/** Fails unless `err` is the SDK's error of `type` and does not quote a marked signing key. */
function expectSdkError(err: unknown, type: new (...args: never[]) => BillingError, key?: unknown): void {
  expect(err).toBeInstanceOf(BillingError);
  expect(err).toBeInstanceOf(type);
  if (typeof key === 'string' && key.startsWith('sk_')) {
    expect(String(err) + JSON.stringify(err)).not.toContain(key);
  }
}

describe('isWellFormed', () => {
  const mixed = fc.string({
    unit: fc.oneof(
      fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF', '🚀'),
      fc.string({ minLength: 1, maxLength: 1 }),
    ),
  });
  const agreesWithTheRegExp = () =>
    fc.assert(
      fc.property(fc.oneof(binaryString, mixed), (text) => {
        expect(isWellFormed(text)).toBe(!LONE_SURROGATE.test(text));
      }),
      { numRuns: 1000 },
    );

  it('is false exactly where the lone-surrogate regular expression matches, on any UTF-16 string', () => {
    agreesWithTheRegExp();
  });

  it('answers the same where the runtime has no String.prototype.isWellFormed (the encodeURIComponent fallback)', () => {
    const proto = String.prototype as { isWellFormed?: unknown };
    const native = Object.getOwnPropertyDescriptor(proto, 'isWellFormed');
    expect(native).toBeDefined(); // else the first test already ran the fallback
    delete proto.isWellFormed;
    try {
      expect(('x' as { isWellFormed?: unknown }).isWellFormed).toBeUndefined();
      agreesWithTheRegExp();
    } finally {
      if (native) Object.defineProperty(proto, 'isWellFormed', native);
    }
  });
});

describe('signHostedLink, any input', () => {
  it('resolves to a link with a u token, or rejects with InvalidRequestError (never a TypeError)', async () => {
    await fc.assert(
      fc.asyncProperty(signParams, async (params) => {
        try {
          const link = await signHostedLink(params as never);
          expect(typeof link).toBe('string');
          expect(new URL(link).searchParams.get('u')).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
        } catch (err) {
          expectSdkError(err, InvalidRequestError, (params as { signingKey?: unknown } | null)?.signingKey);
        }
      }),
      runs,
    );
  });

  it('refuses every string with a lone surrogate in account_ref_id or signingKey', async () => {
    const withLone = binaryString.map((s) => `${s}\uD800${s}`).filter((s) => LONE_SURROGATE.test(s));
    await fc.assert(
      fc.asyncProperty(withLone, fc.boolean(), async (text, inKey) => {
        const params = {
          url: 'https://a.example/p/x',
          account_ref_id: inKey ? 'acct_1' : text,
          signingKey: inKey ? text : signingKey,
        };
        const err = await signHostedLink(params).then(
          () => undefined,
          (e: unknown) => e,
        );
        expectSdkError(err, InvalidRequestError);
        expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual([
          inKey ? 'signingKey' : 'account_ref_id',
        ]);
      }),
      runs,
    );
  });

  it('round-trips any well-formed account id and key through verifyHostedLink', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        key,
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        async (account_ref_id, k, url) => {
          const link = await signHostedLink({ url, account_ref_id, signingKey: k, expiresIn: '1h' });
          const verified = await verifyHostedLink(link, k);
          expect(verified.account_ref_id).toBe(account_ref_id);
          expect(verified.claims.exp! - verified.claims.iat!).toBe(3600);
        },
      ),
      runs,
    );
  });
});

describe('signHostedLink, the link it builds', () => {
  it('puts the page in the path of any appUrl, keeping its query and its fragment last', async () => {
    const page = fc.string({ minLength: 1 }).filter((id) => isWellFormed(id) && id !== '.' && id !== '..');
    await fc.assert(
      fc.asyncProperty(
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        page,
        fc.boolean(),
        async (appUrl, id, tier) => {
          const target = tier ? { tierUrlId: id } : { productUrlId: id };
          const link = new URL(await signHostedLink({ appUrl, ...target, account_ref_id: 'a', signingKey }));
          const app = new URL(appUrl);
          expect(link.origin).toBe(app.origin);
          expect(link.pathname).toBe(
            `${app.pathname.replace(/\/+$/, '')}/${tier ? 't' : 'p'}/${encodeURIComponent(id)}`,
          );
          expect(link.hash).toBe(app.hash);
          const kept = new URLSearchParams(link.search);
          kept.delete('u');
          const given = new URLSearchParams(app.search);
          given.delete('u');
          expect(kept.toString()).toBe(given.toString());
          expect((await verifyHostedLink(link.href, signingKey)).account_ref_id).toBe('a');
        },
      ),
      runs,
    );
  });

  it('refuses any scheme but http: and https:, in url and appUrl alike', async () => {
    const scheme = fc.stringMatching(/^[a-z][a-z0-9+.-]{0,9}$/).filter((s) => s !== 'http' && s !== 'https');
    await fc.assert(
      fc.asyncProperty(scheme, fc.webUrl(), fc.boolean(), async (s, web, asApp) => {
        const bad = `${s}:${web.replace(/^https?:/, '')}`;
        const params = asApp
          ? { appUrl: bad, productUrlId: 'p', account_ref_id: 'a', signingKey }
          : { url: bad, account_ref_id: 'a', signingKey };
        const err = await signHostedLink(params).then(
          () => undefined,
          (e: unknown) => e,
        );
        expectSdkError(err, InvalidRequestError);
        expect((err as InvalidRequestError).issues.map((i) => i.field)).toEqual([asApp ? 'appUrl' : 'url']);
      }),
      runs,
    );
  });
});

describe('verifyHostedLink, any input', () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64url');
  /** Compact JWS-shaped strings with arbitrary JSON (or not JSON) in each part. */
  const jwsShaped = fc
    .tuple(
      fc.oneof(
        fc.json(),
        fc.jsonValue().map((v) => JSON.stringify({ alg: 'HS256', extra: v })),
        binaryString,
      ),
      fc.oneof(fc.json(), binaryString),
      fc.string(),
    )
    .map(([h, p, s]) => `${b64(h)}.${b64(p)}.${b64(s)}`);
  const input = fc.oneof(
    anything,
    binaryString,
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.tuple(fc.webUrl(), binaryString).map(([url, u]) => `${url}?u=${u}`),
    fc.constantFrom('http://[bad?u=x', 'a:', 'https://a.example/p/x?u=', 'x.y.z', '..'),
    jwsShaped,
  );
  const keys = fc.oneof(fc.constant(signingKey), key, binaryString, anything);

  it('resolves to a verified account id, or rejects with HostedLinkError (never a TypeError)', async () => {
    await fc.assert(
      fc.asyncProperty(input, keys, async (raw, k) => {
        try {
          const verified = await verifyHostedLink(raw as never, k as never);
          expect(typeof verified.account_ref_id).toBe('string');
          expect(verified.account_ref_id).not.toBe('');
        } catch (err) {
          expectSdkError(err, HostedLinkError, k);
        }
      }),
      runs,
    );
  });

  it('checks the header and claims of a token signed with the key: a result or HostedLinkError', async () => {
    const encoded = new TextEncoder().encode(signingKey);
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.dictionary(fc.string(), fc.jsonValue()),
        async (header, payload) => {
          let token: string;
          try {
            token = await new SignJWT(payload as Record<string, unknown>)
              .setProtectedHeader({ ...header, alg: 'HS256' })
              .sign(encoded);
          } catch {
            return; // jose will not sign this header (e.g. an unknown `crit`): nothing to verify.
          }
          try {
            const verified = await verifyHostedLink(token, signingKey);
            expect(verified.account_ref_id).toBe(payload.account_ref_id);
          } catch (err) {
            expectSdkError(err, HostedLinkError);
          }
        },
      ),
      runs,
    );
  });
});
