import { InvalidRequestError, type InvalidRequestIssue } from '../core/errors.js';

/** Where the link points: a full URL (e.g. from `resolve.publicUrl`), or the app URL and a page id. */
export type HostedLinkTarget =
  | { url: string; appUrl?: never; productUrlId?: never; tierUrlId?: never }
  | { appUrl: string; productUrlId: string; url?: never; tierUrlId?: never }
  | { appUrl: string; tierUrlId: string; url?: never; productUrlId?: never };

/** Parameters of {@link signHostedLink}. */
export type SignHostedLinkParams = HostedLinkTarget & {
  /** The account the hosted page is opened for: the token's one required claim. */
  account_ref_id: string;
  /** The payment gateway's signing key of the product or tier (HS256 secret). */
  signingKey: string;
  /** Optional lifetime: seconds, or a jose time span such as `'15m'`. No `exp` claim when omitted. */
  expiresIn?: number | string;
};

const encoder = new TextEncoder();

/**
 * Signs a hosted product or tier link: an HS256 JWT with the claim `account_ref_id`, URL-encoded
 * and set as the `u` query parameter (replacing any `u` already there, keeping the other
 * parameters).
 *
 * @example
 * ```ts
 * const { url } = await billing.resolve.publicUrl({ account_ref_id: user.id, product_name: 'ebook', email: user.email });
 * const link = await signHostedLink({ url, account_ref_id: user.id, signingKey: process.env.BILLING_SIGNING_KEY! });
 * // https://app.example.com/p/ebook?u=eyJhbGciOiJIUzI1NiJ9...
 * ```
 */
export async function signHostedLink(params: SignHostedLinkParams): Promise<string> {
  const target = linkUrl(params);
  const { SignJWT } = await import('./jose-sign.js');
  let token = new SignJWT({ account_ref_id: params.account_ref_id })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt();
  if (params.expiresIn !== undefined) {
    token = token.setExpirationTime(
      typeof params.expiresIn === 'number'
        ? Math.floor(Date.now() / 1000) + params.expiresIn
        : params.expiresIn,
    );
  }
  target.searchParams.set('u', await token.sign(encoder.encode(params.signingKey)));
  return target.href;
}

/** Checks the parameters and builds the URL to sign, before any crypto runs. */
function linkUrl(params: SignHostedLinkParams): URL {
  const issues: InvalidRequestIssue[] = [];
  const p = (params ?? {}) as Record<string, unknown>;
  if (typeof p.account_ref_id !== 'string' || p.account_ref_id === '') {
    issues.push({ field: 'account_ref_id', message: 'is required' });
  }
  if (typeof p.signingKey !== 'string' || p.signingKey === '') {
    issues.push({ field: 'signingKey', message: 'is required (an empty key would sign forgeable links)' });
  }
  const page = typeof p.productUrlId === 'string' ? `p/${encodeURIComponent(p.productUrlId)}` : undefined;
  const tierPage = typeof p.tierUrlId === 'string' ? `t/${encodeURIComponent(p.tierUrlId)}` : undefined;
  const raw =
    typeof p.url === 'string'
      ? p.url
      : typeof p.appUrl === 'string' && (page ?? tierPage)
        ? `${p.appUrl.replace(/\/+$/, '')}/${page ?? tierPage}`
        : undefined;
  let url: URL | undefined;
  if (raw === undefined) {
    issues.push({ field: 'url', message: 'or appUrl with productUrlId or tierUrlId is required' });
  } else if (page && tierPage) {
    issues.push({ field: 'productUrlId', message: 'excludes tierUrlId' });
  } else {
    try {
      url = new URL(raw);
    } catch {
      issues.push({ field: p.url === undefined ? 'appUrl' : 'url', message: 'must be an absolute URL' });
    }
  }
  if (issues.length || !url) throw new InvalidRequestError('signHostedLink', issues);
  return url;
}
