import type { BillingClient } from '../client.js';
import type { PaywallTarget } from './types.js';

/** At most this many links are kept; the oldest go first. */
const MAX_LINKS = 10_000;

/**
 * Paywall links, each resolved once per account, target and e-mail and reused for `ttlMs`, so a
 * flood of denied requests is not a flood of resolve calls (concurrent ones share one). A link that
 * could not be resolved is remembered as none for the same time: the "no" stands without a link,
 * it never becomes a "yes".
 */
export class PaywallLinks {
  readonly #links = new Map<string, { until: number; url: Promise<string | undefined> }>();

  constructor(
    private readonly billing: BillingClient,
    private readonly signingKey: string,
    private readonly ttlMs: number,
  ) {}

  /** The signed link for `account` to `target`, or `undefined` when it does not resolve. */
  get(account: string, target: PaywallTarget, email: string | undefined): Promise<string | undefined> {
    const key = JSON.stringify([account, target, email ?? null]);
    const now = Date.now();
    const held = this.#links.get(key);
    if (held && held.until > now) return held.url;
    if (held) this.#links.delete(key);
    if (this.#links.size >= MAX_LINKS) this.#links.delete(this.#links.keys().next().value as string);
    const url = this.billing.resolve
      .signedUrl(
        { account_ref_id: account, ...target, ...(email ? { email } : {}) },
        { signingKey: this.signingKey },
      )
      .then(
        (link) => link,
        () => undefined,
      );
    this.#links.set(key, { until: now + this.ttlMs, url });
    return url;
  }
}
