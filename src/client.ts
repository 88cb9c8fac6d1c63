import { memoryCooldown } from './core/cooldown.js';
import type { ClientOptions } from './core/options.js';
import { checkOptionsObject } from './internal/checks.js';
import { DEFAULT_TIMEOUT_MS, resolveOptions } from './internal/options.js';
import { ApiCore } from './internal/request.js';
import { Accounts } from './resources/accounts.js';
import { Entitlements } from './resources/entitlements.js';
import { Invoices } from './resources/invoices.js';
import { Products } from './resources/products.js';
import { Resolve } from './resources/resolve.js';
import { Tiers } from './resources/tiers.js';
import { Transactions } from './resources/transactions.js';
import { Usage } from './resources/usage.js';
import { scopedTo, serviceNamespace } from './util/service-namespace.js';

/**
 * What the helpers built on a client read of it (its service namespace, its attempt timeout), kept on
 * the client under a key every copy of the package shares rather than in private fields: the helpers
 * of one copy (the ESM or the CJS build, or the copy inside `billing-sdk/ai`'s bundle) are handed
 * clients of another, whose private fields their code cannot read.
 */
const INTERNALS = /* @__PURE__ */ Symbol.for('billing-sdk.client');

interface ClientInternals {
  readonly service: string;
  readonly attemptTimeoutMs: number;
}

/** What a helper reads of `client`: a TypeError when `client` is no BillingClient (the helpers check that first). */
const internalsOf = (client: BillingClient): ClientInternals =>
  (client as unknown as Record<symbol, ClientInternals>)[INTERNALS] as ClientInternals;

/**
 * How long one attempt of `client` may take: what a helper built on a client (the access cache)
 * waits at most for another instance's request. Not exported from the package.
 */
export const attemptTimeoutOf = (client: BillingClient): number => internalsOf(client).attemptTimeoutMs;

/**
 * The {@link serviceNamespace} of `client` (a digest of its API key and base URL, never the key):
 * what a shared store made for the client (access answers, hold ledgers, the cooldown) keys its
 * content under, so clients of different services on one Redis or database never mix. Not
 * exported from the package.
 */
export const serviceOf = (client: BillingClient): string => internalsOf(client).service;

/**
 * The Billing Service API client. Create one per process and share it: it holds no per-request
 * state. Every method takes its parameters and, last, {@link RequestOptions}.
 *
 * @example
 * ```ts
 * import { BillingClient } from 'billing-sdk';
 *
 * const billing = new BillingClient({
 *   apiKey: process.env.BILLING_API_KEY,
 *   baseUrl: 'https://billing.example.com/api/',
 * });
 * const page = await billing.invoices.list({ account_ref_id: 'acct_1' });
 * console.log(page.count, page.results[0]?.status);
 * ```
 */
export class BillingClient {
  /** Payment transactions of an account. */
  readonly transactions: Transactions;
  /** Live subscription state: `status`, `isActive`, `fixSubscription`. */
  readonly accounts: Accounts;
  /** Subscription tiers. */
  readonly tiers: Tiers;
  /** The product catalog. */
  readonly products: Products;
  /** Invoices: create, and list by account or e-mail. */
  readonly invoices: Invoices;
  /** Public URLs of SaaS products and tiers. */
  readonly resolve: Resolve;
  /** Feature entitlements. */
  readonly entitlements: Entitlements;
  /** Prepaid credits and metered usage. */
  readonly usage: Usage;
  /** The options given to the constructor, kept for {@link withOptions}; private so the key never shows when the client is logged. */
  readonly #options: ClientOptions;

  /**
   * @param options - see {@link ClientOptions}; `apiKey` and `baseUrl` default to the env variables
   * `BILLING_API_KEY` and `BILLING_BASE_URL`.
   * @throws {@link InvalidRequestError} when `options` is not a plain object, or the key or base URL
   * is missing or unsafe.
   */
  constructor(options: ClientOptions = {}) {
    // Before the spread below: `{ ...null }` and `{ ...42 }` are `{}`, which would pass for no options.
    checkOptionsObject('new BillingClient', options);
    // The cooldown is made here, not among the options' defaults, so clients from withOptions share it.
    const withCooldown = { ...options, cooldown: options.cooldown ?? memoryCooldown() };
    this.#options = withCooldown;
    const resolved = resolveOptions(withCooldown);
    const service = serviceNamespace(resolved.apiKey, resolved.baseUrl);
    // Not enumerable, and not in the published types: a logged client shows none of it.
    Object.defineProperty(this, INTERNALS, {
      value: { service, attemptTimeoutMs: withCooldown.timeout ?? DEFAULT_TIMEOUT_MS },
    });
    // A cooldown shared through a store (redisCooldown) keeps this service's windows apart from
    // another's: one key's 429 never holds a client of another key or base URL.
    resolved.cooldown = scopedTo(resolved.cooldown, service);
    const core = new ApiCore(resolved);
    this.transactions = new Transactions(core);
    this.accounts = new Accounts(core);
    this.tiers = new Tiers(core);
    this.products = new Products(core);
    this.invoices = new Invoices(core);
    this.resolve = new Resolve(core);
    this.entitlements = new Entitlements(core);
    this.usage = new Usage(core);
  }

  /**
   * A new client with some options changed and the rest shared.
   *
   * @throws {@link InvalidRequestError} when `options` is not a plain object (operation
   * `withOptions`), or an option is invalid (operation `new BillingClient`).
   *
   * @example
   * ```ts
   * const patient = billing.withOptions({ timeout: 120_000, maxRetries: 5 });
   * ```
   */
  withOptions(options: ClientOptions): BillingClient {
    checkOptionsObject('withOptions', options);
    return new BillingClient({ ...this.#options, ...options });
  }
}
