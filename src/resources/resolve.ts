import { check, required, text } from '../core/checks.js';
import { InvalidRequestError, type InvalidRequestIssue } from '../core/errors.js';
import type { RequestOptions } from '../core/options.js';
import type { ApiCore } from '../core/request.js';
import { signHostedLink } from '../links/sign.js';
import { type ResolvedUrl, ResolveResponseSchema } from '../schemas/resolve.js';

/** Parameters of {@link Resolve.publicUrl}: `product_name`, or `subscription_name` with `tier_name`. */
export interface ResolveParams {
  /** The account the link is for (it must own the subscription, when there is one). */
  account_ref_id: string;
  /** A one-time product's label. Excludes `subscription_name` and `tier_name`. */
  product_name?: string;
  /** A subscription product's label (saas_mode); needs `tier_name`. */
  subscription_name?: string;
  /** A tier label; needs `subscription_name`. */
  tier_name?: string;
  /** Customer e-mail: required with a subscription and tier, and with a saas_only product. */
  email?: string;
}

const rules = {
  account_ref_id: [required, text],
  product_name: [text],
  subscription_name: [text],
  tier_name: [text],
  email: [text],
};

/** Options of {@link Resolve.signedUrl}: the signing key, an optional lifetime, and the usual request options. */
export interface SignedUrlOptions extends RequestOptions {
  /** The payment gateway's signing key of the product or tier. */
  signingKey: string;
  /** Optional token lifetime (seconds, or a span such as `'15m'`); no `exp` when omitted. */
  expiresIn?: number | string;
}

/** The reference's combination rules for resolve, checked before sending. */
function combination(p: Record<string, unknown>): InvalidRequestIssue[] {
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
}

/** `billing.resolve`: customer-facing links of SaaS products and tiers. */
export class Resolve {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

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
  async publicUrl(params: ResolveParams, options?: RequestOptions): Promise<ResolvedUrl> {
    const response = await this.#core.call(options, () => ({
      operation: 'resolve.publicUrl',
      method: 'GET',
      path: 'resolve/public-url/',
      query: check('resolve.publicUrl', params, rules, combination),
      schema: ResolveResponseSchema,
    }));
    return { url: 'public_url' in response ? response.public_url : response.url, response };
  }

  /**
   * Resolves the public URL, then signs it for `account_ref_id`: the link to send the customer to.
   *
   * @example
   * ```ts
   * const link = await billing.resolve.signedUrl(
   *   { account_ref_id: user.id, product_name: 'ebook', email: user.email },
   *   { signingKey: process.env.BILLING_SIGNING_KEY! },
   * );
   * ```
   */
  async signedUrl(params: ResolveParams, options: SignedUrlOptions): Promise<string> {
    const { signingKey, expiresIn, ...requestOptions } = options ?? ({} as SignedUrlOptions);
    if (!signingKey) {
      throw new InvalidRequestError('resolve.signedUrl', [{ field: 'signingKey', message: 'is required' }]);
    }
    const { url } = await this.publicUrl(params, requestOptions);
    return signHostedLink({ url, account_ref_id: params.account_ref_id, signingKey, expiresIn });
  }
}
