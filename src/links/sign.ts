import { InvalidRequestError, type InvalidRequestIssue } from '../core/errors/index.js';
import { isWellFormed } from '../util/well-formed.js';

/** Where the link points: a full URL (e.g. from `resolve.publicUrl`), or the app URL and a page id. */
export type HostedLinkTarget =
  | {
      /** The page's full URL, e.g. from `resolve.publicUrl`; a `u` parameter in it is replaced. */
      url: string;
      /** Not with `url`. */
      appUrl?: never | undefined;
      /** Not with `url`. */
      productUrlId?: never | undefined;
      /** Not with `url`. */
      tierUrlId?: never | undefined;
    }
  | {
      /**
       * The host that serves hosted pages (the reference's `{app_url}`); the link is
       * `<appUrl>/p/<productUrlId>`.
       */
      appUrl: string;
      /** Id of the hosted product page. */
      productUrlId: string;
      /** Not with `appUrl`. */
      url?: never | undefined;
      /** Not with `productUrlId`. */
      tierUrlId?: never | undefined;
    }
  | {
      /**
       * The host that serves hosted pages (the reference's `{app_url}`); the link is
       * `<appUrl>/t/<tierUrlId>`.
       */
      appUrl: string;
      /** Id of the hosted tier page. */
      tierUrlId: string;
      /** Not with `appUrl`. */
      url?: never | undefined;
      /** Not with `tierUrlId`. */
      productUrlId?: never | undefined;
    };

/** Parameters of {@link signHostedLink}. */
export type SignHostedLinkParams = HostedLinkTarget & {
  /** The account the hosted page is opened for: the token's one required claim. */
  account_ref_id: string;
  /** The payment gateway's signing key of the product or tier (HS256 secret). */
  signingKey: string;
  /**
   * Optional lifetime, more than zero: seconds, or a jose time span such as `'15m'`, `'2 hours'` or
   * `'1.5d'`. No `exp` claim when omitted.
   */
  expiresIn?: number | string | undefined;
};

const encoder = new TextEncoder();

/**
 * Signs a hosted product or tier link: an HS256 JWT with the claim `account_ref_id`, URL-encoded
 * and set as the `u` query parameter (replacing any `u` already there, keeping the other
 * parameters).
 *
 * With `appUrl`, the page is joined to its path with the URL API: a query of `appUrl` is kept
 * (`https://app.example.com/?ref=mail` gives `https://app.example.com/p/<id>?ref=mail&u=…`), and a
 * fragment stays after it.
 *
 * @throws {@link InvalidRequestError} naming every bad parameter (a missing or non-string field, a
 * string with a lone UTF-16 surrogate, a URL that does not parse or whose scheme is not `http:` or
 * `https:` — a `javascript:`, `data:` or `vbscript:` link is never signed —, an `expiresIn` that is
 * not a positive number of seconds or time span), before any crypto runs.
 * @example
 * ```ts
 * const { url } = await billing.resolve.publicUrl({ account_ref_id: user.id, product_name: 'ebook', email: user.email });
 * const link = await signHostedLink({ url, account_ref_id: user.id, signingKey: process.env.BILLING_SIGNING_KEY! });
 * // https://app.example.com/p/ebook?u=eyJhbGciOiJIUzI1NiJ9...
 * ```
 */
export async function signHostedLink(params: SignHostedLinkParams): Promise<string> {
  // null, undefined and primitives become objects without fields: each field is then reported missing.
  const p: Record<string, unknown> = Object(params);
  const issues: InvalidRequestIssue[] = [];
  const account_ref_id = text(p, 'account_ref_id', issues);
  const signingKey = text(p, 'signingKey', issues);
  const target = linkUrl(p, issues);
  const { expiresIn } = p;
  if (expiresIn !== undefined && !ahead(expiresIn)) issues.push(badExpiresIn);
  // One error names every problem, before jose loads and before any crypto.
  if (issues.length || !account_ref_id || !signingKey || !target) {
    throw new InvalidRequestError('signHostedLink', issues);
  }
  const { SignJWT } = await import('./jose-sign.js');
  const token = new SignJWT({ account_ref_id })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt();
  try {
    // Numbers on the same clock as jose's `iat`, so `exp - iat` is exactly the lifetime asked for.
    if (expiresIn !== undefined) {
      token.setExpirationTime(
        typeof expiresIn === 'string' ? expiresIn : Math.floor(Date.now() / 1000) + (expiresIn as number),
      );
    }
  } catch {
    // jose's grammar is the documented one; its bare TypeError would escape `instanceof BillingError`.
    throw new InvalidRequestError('signHostedLink', [badExpiresIn]);
  }
  target.searchParams.set('u', await token.sign(encoder.encode(signingKey)));
  return target.href;
}

const badExpiresIn: InvalidRequestIssue = {
  field: 'expiresIn',
  message: "must be seconds > 0 or a span such as '15m'",
};

/**
 * Whether `expiresIn` can be a lifetime ahead of now: a finite number above zero, or a string that is
 * not a negative or zero span (`'-1h'`, `'2 days ago'`, `'0s'`: a link already expired). Whether the
 * string is a span at all is jose's to say, so the grammar lives in one place (and stays out of
 * the signing bundle, which has a size budget). A span jose rounds to zero (`'0.1s'`) still passes.
 */
function ahead(expiresIn: unknown): boolean {
  return typeof expiresIn === 'string'
    ? !/^-|ago$|^\+? ?[0.]* ?[a-z]/i.test(expiresIn)
    : Number.isFinite(expiresIn) && (expiresIn as number) > 0;
}

/**
 * `p[field]` when it is a non-empty, well-formed string (no lone surrogate); otherwise records an
 * issue and returns `undefined`. Messages never quote the value: it may be the key.
 */
function text(p: Record<string, unknown>, field: string, issues: InvalidRequestIssue[]): string | undefined {
  const value = p[field];
  if (typeof value === 'string' && value && isWellFormed(value)) return value;
  issues.push({ field, message: 'must be a non-empty, well-formed string' });
}

/**
 * The URL to sign: `url` as given, or `appUrl` with `/p/<productUrlId>` or `/t/<tierUrlId>` (one of
 * the two; `productUrlId` is the one reported when neither is given).
 */
function linkUrl(p: Record<string, unknown>, issues: InvalidRequestIssue[]): URL | undefined {
  if (p.url !== undefined || p.appUrl === undefined) return web(text(p, 'url', issues), 'url', issues);
  if (p.productUrlId !== undefined && p.tierUrlId !== undefined) {
    issues.push({ field: 'productUrlId', message: 'excludes tierUrlId' });
    return;
  }
  const page = p.tierUrlId === undefined ? 'productUrlId' : 'tierUrlId';
  const app = web(text(p, 'appUrl', issues), 'appUrl', issues);
  const id = text(p, page, issues);
  if (id === '.' || id === '..') {
    // The URL parser reads them as a move up the path: the link would name another page.
    issues.push({ field: page, message: 'must not be "." or ".."' });
    return;
  }
  if (!app || !id) return;
  // The page joins the path; a query of appUrl stays the query and a fragment stays last (string
  // concatenation put the page id into either, and the customer landed on the app's root).
  app.pathname = `${app.pathname.replace(/\/+$/, '')}/${page[0]}/${encodeURIComponent(id)}`;
  return app;
}

/**
 * `raw` parsed, when it is an absolute `http:` or `https:` URL. Any other scheme is refused: a
 * `javascript:`, `data:` or `vbscript:` link from the service, signed and rendered by a front end
 * (the gate's `upgrade_url`), would run script in the app's origin.
 */
function web(raw: string | undefined, field: string, issues: InvalidRequestIssue[]): URL | undefined {
  if (!raw) return;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    issues.push({ field, message: 'must be an absolute URL' });
    return;
  }
  if (url.protocol === 'https:' || url.protocol === 'http:') return url;
  issues.push({ field, message: 'must be an http: or https: URL' });
}
