import { APIPromise } from '../core/api-promise.js';
import { InvalidRequestError } from '../core/errors/index.js';
import type { RequestOptions } from '../core/options.js';
import { type CrossRule, isPlainObject, required, text } from '../internal/checks.js';
import { endpoint } from '../internal/endpoint.js';
import { APIResource } from '../internal/resource.js';
import { signHostedLink } from '../links/sign.js';
import { type ResolvedUrl, type ResolveResponse, ResolveResponseSchema } from '../schemas/resolve.js';

/** Parameters of {@link Resolve.publicUrl}: `product_name`, or `subscription_name` with `tier_name`. */
export interface ResolveParams {
  /** The account the link is for (it must own the subscription, when there is one). */
  account_ref_id: string;
  /** A one-time product's label. Excludes `subscription_name` and `tier_name`. */
  product_name?: string | undefined;
  /** A subscription product's label (saas_mode); needs `tier_name`. */
  subscription_name?: string | undefined;
  /** A tier label; needs `subscription_name`. */
  tier_name?: string | undefined;
  /** Customer e-mail: required with a subscription and tier, and with a saas_only product. */
  email?: string | undefined;
}

/** Options of {@link Resolve.signedUrl}: the signing key, an optional lifetime, and the usual request options. */
export interface SignedUrlOptions extends RequestOptions {
  /** The payment gateway's signing key of the product or tier. */
  signingKey: string;
  /** Optional token lifetime (seconds, or a span such as `'15m'`); no `exp` when omitted. */
  expiresIn?: number | string | undefined;
}

/** The reference's combination rules for resolve, checked before sending. */
const combination: CrossRule = (p) => {
  const hasProduct = p.product_name !== undefined;
  const hasSub = p.subscription_name !== undefined;
  const hasTier = p.tier_name !== undefined;
  if (hasProduct && (hasSub || hasTier)) {
    return [{ field: 'product_name', message: 'excludes subscription_name and tier_name' }];
  }
  if (!hasProduct && !hasSub && !hasTier) {
    return [{ field: 'product_name', message: 'or both subscription_name and tier_name are required' }];
  }
  if (hasSub !== hasTier) {
    return hasSub
      ? [{ field: 'tier_name', message: 'is required with subscription_name' }]
      : [{ field: 'subscription_name', message: 'is required with tier_name' }];
  }
  if (hasSub && p.email === undefined) {
    return [{ field: 'email', message: 'is required with subscription_name and tier_name' }];
  }
  return [];
};

const publicUrl = endpoint<ResolveParams, ResolveResponse, ResolvedUrl>({
  operation: 'resolve.publicUrl',
  method: 'GET',
  rules: {
    account_ref_id: [required, text],
    product_name: [text],
    subscription_name: [text],
    tier_name: [text],
    email: [text],
  },
  cross: combination,
  build: (query) => ({ path: 'resolve/public-url/', query }),
  schema: ResolveResponseSchema,
  transform: (response) => ({ url: 'public_url' in response ? response.public_url : response.url, response }),
});

/** `billing.resolve`: customer-facing links of SaaS products and tiers. */
export class Resolve extends APIResource {
  /**
   * The public URL of a saas_only product or tier, from either response shape. Append the signed
   * `?u=` token with `signHostedLink` (or use `resolve.signedUrl`).
   *
   * @example
   * ```ts
   * const { url } = await billing.resolve.publicUrl({
   *   account_ref_id: 'acct_1', subscription_name: 'pro-plan', tier_name: 'pro', email: 'ada@example.com',
   * });
   * ```
   */
  publicUrl(params: ResolveParams, options?: RequestOptions): APIPromise<ResolvedUrl> {
    return this._call(publicUrl, params, options);
  }

  /**
   * Resolves the public URL, then signs it for `account_ref_id`: the link to send the customer to.
   * `.withResponse()` gives the resolve call's response.
   *
   * @example
   * ```ts
   * const link = await billing.resolve.signedUrl(
   *   { account_ref_id: user.id, product_name: 'ebook', email: user.email },
   *   { signingKey: process.env.BILLING_SIGNING_KEY! },
   * );
   * ```
   */
  signedUrl(params: ResolveParams, options: SignedUrlOptions): APIPromise<string> {
    return new APIPromise(
      (async () => {
        if (!isPlainObject(options)) {
          throw new InvalidRequestError('resolve.signedUrl', [
            { field: 'options', message: 'must be an object with signingKey' },
          ]);
        }
        const { signingKey, expiresIn, ...requestOptions } = options;
        if (text(signingKey)) {
          throw new InvalidRequestError('resolve.signedUrl', [
            { field: 'signingKey', message: 'is required (a non-empty string)' },
          ]);
        }
        const { data, response } = await this.publicUrl(params, requestOptions).withResponse();
        const link = await signHostedLink({
          url: data.url,
          account_ref_id: params.account_ref_id,
          signingKey,
          expiresIn,
        });
        return { data: link, response };
      })(),
    );
  }
}
