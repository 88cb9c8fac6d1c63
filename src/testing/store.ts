import type {
  AccountInput,
  AccountRecord,
  InvoiceInput,
  InvoiceRecord,
  InvoiceStatus,
  LedgerEntry,
  ProductRecord,
  SubscriptionInput,
  SubscriptionRecord,
  TierRecord,
  TransactionInput,
  TransactionRecord,
  TransactionStatus,
  UsageEventInput,
  UsageEventRecord,
} from './records.js';
import { loadSeed, type SeedName } from './seed.js';
import { isoTimestamp } from './time.js';

/** Options of a {@link MockStore}. */
export interface MockStoreOptions {
  /** Data loaded at construction and by `reset()`; default `'demo'`. */
  seed?: SeedName | undefined;
  /**
   * Clock for records created at run time (invoices, debits, usage events). Seed data never
   * reads it, so the seed stays byte-for-byte deterministic.
   */
  now?: (() => Date) | undefined;
}

/** Filter of {@link MockStore.invoices}; all given criteria must match. */
export interface InvoiceFilter {
  /** Only invoices of this account. */
  account_ref_id?: string | undefined;
  /** Matches `customer_email`, case-insensitively. */
  email?: string | undefined;
  /** Only invoices in this status. */
  status?: InvoiceStatus | undefined;
}

/** Inclusive time range in epoch milliseconds; a missing bound is open. */
export interface TimeRange {
  /** Earliest time included, in epoch ms; no lower bound when omitted. */
  start?: number | undefined;
  /** Latest time included, in epoch ms; no upper bound when omitted. */
  end?: number | undefined;
}

const DAY_MS = 86_400_000;

/** Drops keys whose value is undefined, so an explicit `undefined` never overrides a default. */
function defined<T extends object>(input: T): T {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as T;
}

function balanceKey(account: string, product: string, code: string): string {
  // JSON keeps the three parts unambiguous whatever characters the ids contain.
  return JSON.stringify([account, product, code]);
}

/**
 * The mock's in-memory state. Lookups return the live records, so tests (and lifecycle
 * simulations) can change state either through the helpers or by editing a record in place.
 * Ids come from counters, so the same sequence of calls always produces the same ids.
 */
export class MockStore {
  /** Seed that `reset()` restores. */
  readonly seed: SeedName;
  /** Approved debits by event_key: a replay answers the stored result and moves nothing. */
  readonly ledger = new Map<string, LedgerEntry>();

  readonly #now: () => Date;
  readonly #products: ProductRecord[] = [];
  readonly #tiers: TierRecord[] = [];
  readonly #accounts = new Map<string, AccountRecord>();
  readonly #subscriptions: SubscriptionRecord[] = [];
  readonly #invoices: InvoiceRecord[] = [];
  readonly #transactions: TransactionRecord[] = [];
  readonly #balances = new Map<string, number>();
  readonly #entitlements = new Map<string, boolean>();
  readonly #usage = new Map<string, UsageEventRecord>();
  #invoiceSeq = 0;
  #subscriptionSeq = 0;
  #uuidSeq = 0;

  /** A store loaded with `options.seed` (default `'demo'`). */
  constructor(options: MockStoreOptions = {}) {
    this.seed = options.seed ?? 'demo';
    this.#now = options.now ?? (() => new Date());
    this.reset();
  }

  /** Drops everything, restarts the id counters and loads the seed again. */
  reset(): void {
    this.ledger.clear();
    this.#products.length = 0;
    this.#tiers.length = 0;
    this.#accounts.clear();
    this.#subscriptions.length = 0;
    this.#invoices.length = 0;
    this.#transactions.length = 0;
    this.#balances.clear();
    this.#entitlements.clear();
    this.#usage.clear();
    this.#invoiceSeq = 0;
    this.#subscriptionSeq = 0;
    this.#uuidSeq = 0;
    loadSeed(this, this.seed);
  }

  /** Current time of the store clock, as the service formats timestamps. */
  now(): string {
    return isoTimestamp(this.#now());
  }

  /** A deterministic UUID v4-shaped id from a counter (`00000000-0000-4000-8000-000000000001`, ...). */
  nextUuid(): string {
    this.#uuidSeq += 1;
    return `00000000-0000-4000-8000-${this.#uuidSeq.toString(16).padStart(12, '0')}`;
  }

  // Catalog

  /** All products, ordered by title as `GET /products/` is. */
  products(): ProductRecord[] {
    return [...this.#products].sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
  }

  /** Adds a catalog entry (e.g. a product with another usage model). */
  addProduct(product: ProductRecord): ProductRecord {
    this.#products.push(product);
    return product;
  }

  /** A product by manage_id. */
  product(manageId: string): ProductRecord | undefined {
    return this.#products.find((p) => p.manage_id === manageId);
  }

  /** A product by product_code (entitlements, balances, usage). */
  productByCode(code: string): ProductRecord | undefined {
    return this.#products.find((p) => p.product_code === code);
  }

  /** A product by label_name (tiers, resolve, status filters), optionally of one type. */
  productByLabel(label: string, type?: ProductRecord['type']): ProductRecord | undefined {
    return this.#products.find((p) => p.label_name === label && (type === undefined || p.type === type));
  }

  /** Adds a tier to a subscription product. */
  addTier(tier: TierRecord): TierRecord {
    this.#tiers.push(tier);
    return tier;
  }

  /** Tiers in catalog order, all or those of one product. */
  tiers(productManageId?: string): TierRecord[] {
    return this.#tiers.filter(
      (t) => productManageId === undefined || t.product_manage_id === productManageId,
    );
  }

  /** A tier by its product and label. */
  tier(productManageId: string, label: string): TierRecord | undefined {
    return this.#tiers.find((t) => t.product_manage_id === productManageId && t.label_name === label);
  }

  // Accounts and subscriptions

  /** An account, or undefined for an id the service has never seen. */
  account(accountRefId: string): AccountRecord | undefined {
    return this.#accounts.get(accountRefId);
  }

  /** Every account, in insertion order. */
  accounts(): AccountRecord[] {
    return [...this.#accounts.values()];
  }

  /** Adds (or replaces) an account. */
  addAccount(input: AccountInput): AccountRecord {
    const account: AccountRecord = { created_at: this.now(), ...defined(input) };
    this.#accounts.set(account.account_ref_id, account);
    return account;
  }

  /** Subscriptions of an account, oldest first. */
  subscriptions(accountRefId: string): SubscriptionRecord[] {
    return this.#subscriptions.filter((s) => s.account_ref_id === accountRefId);
  }

  /** A subscription by its processor id. */
  subscription(subscriptionId: string): SubscriptionRecord | undefined {
    return this.#subscriptions.find((s) => s.subscription_id === subscriptionId);
  }

  /** Adds a subscription; the account must exist. */
  addSubscription(input: SubscriptionInput): SubscriptionRecord {
    this.#requireAccount(input.account_ref_id);
    this.#subscriptionSeq += 1;
    const now = this.now();
    const subscription: SubscriptionRecord = {
      subscription_id: `sub_mock_${String(this.#subscriptionSeq).padStart(4, '0')}`,
      created_at: now,
      updated_at: input.created_at ?? now,
      ...defined(input),
    };
    this.#subscriptions.push(subscription);
    return subscription;
  }

  /** Activates or deactivates a subscription, touching `updated_at`. */
  setSubscriptionActive(subscriptionId: string, isActive: boolean): SubscriptionRecord {
    const subscription = this.subscription(subscriptionId);
    if (!subscription) throw new Error(`Unknown subscription ${subscriptionId}`);
    subscription.is_active = isActive;
    subscription.updated_at = this.now();
    return subscription;
  }

  // Invoices

  /** Invoices matching a filter, newest (most recently added) first. */
  invoices(filter: InvoiceFilter = {}): InvoiceRecord[] {
    const email = filter.email?.toLowerCase();
    return this.#invoices
      .filter(
        (i) =>
          (filter.account_ref_id === undefined || i.account_ref_id === filter.account_ref_id) &&
          (email === undefined || i.customer_email.toLowerCase() === email) &&
          (filter.status === undefined || i.status === filter.status),
      )
      .reverse();
  }

  /** An invoice by its processor id. */
  invoice(processorInvoiceId: string): InvoiceRecord | undefined {
    return this.#invoices.find((i) => i.processor_invoice_id === processorInvoiceId);
  }

  /** Adds an invoice with the defaults documented on {@link InvoiceInput}. */
  addInvoice(input: InvoiceInput): InvoiceRecord {
    this.#invoiceSeq += 1;
    const id = input.processor_invoice_id ?? `in_mock_${String(this.#invoiceSeq).padStart(4, '0')}`;
    const status = input.status ?? 'open';
    const invoiceDate = input.invoice_date ?? this.now();
    const invoice: InvoiceRecord = {
      processor_invoice_id: id,
      status,
      is_paid: status === 'paid',
      amount_paid: status === 'paid' ? input.amount_due : 0,
      currency: 'usd',
      invoice_date: invoiceDate,
      due_date: isoTimestamp(new Date(Date.parse(invoiceDate) + 30 * DAY_MS)),
      period_start: null,
      period_end: null,
      hosted_invoice_url: `/i/${id}`,
      processor_subscription_id: '',
      created_at: invoiceDate,
      updated_at: input.created_at ?? invoiceDate,
      ...defined(input),
    };
    this.#invoices.push(invoice);
    return invoice;
  }

  /** Changes an invoice's status, keeping `is_paid`, `amount_paid` and `updated_at` consistent. */
  setInvoiceStatus(processorInvoiceId: string, status: InvoiceStatus): InvoiceRecord {
    const invoice = this.invoice(processorInvoiceId);
    if (!invoice) throw new Error(`Unknown invoice ${processorInvoiceId}`);
    invoice.status = status;
    invoice.is_paid = status === 'paid';
    invoice.amount_paid = status === 'paid' ? invoice.amount_due : 0;
    invoice.updated_at = this.now();
    return invoice;
  }

  // Transactions

  /** Transactions of an account, newest (most recently added) first, optionally of one status. */
  transactions(accountRefId: string, status?: TransactionStatus): TransactionRecord[] {
    return this.#transactions
      .filter((t) => t.account_ref_id === accountRefId && (status === undefined || t.status === status))
      .reverse();
  }

  /** Adds a transaction; the email defaults to the account's. */
  addTransaction(input: TransactionInput): TransactionRecord {
    const now = this.now();
    const transaction: TransactionRecord = {
      transaction_uuid: this.nextUuid(),
      currency: 'usd',
      customer_email: this.account(input.account_ref_id)?.customer_email ?? '',
      created_at: now,
      updated_at: input.created_at ?? now,
      ...defined(input),
    };
    this.#transactions.push(transaction);
    return transaction;
  }

  // Entitlements and credits

  /** Whether an account holds an entitlement; false when never granted. */
  entitlement(accountRefId: string, productCode: string, entitlementCode: string): boolean {
    return this.#entitlements.get(balanceKey(accountRefId, productCode, entitlementCode)) ?? false;
  }

  /** Grants or revokes an entitlement. */
  setEntitlement(accountRefId: string, productCode: string, entitlementCode: string, granted: boolean): void {
    this.#entitlements.set(balanceKey(accountRefId, productCode, entitlementCode), granted);
  }

  /** Prepaid credit balance; 0 when no balance record exists, as the reference says. */
  balance(accountRefId: string, productCode: string, meterCode: string): number {
    return this.#balances.get(balanceKey(accountRefId, productCode, meterCode)) ?? 0;
  }

  /** Sets a prepaid credit balance (a top-up, or a test's starting point). */
  setBalance(accountRefId: string, productCode: string, meterCode: string, balance: number): void {
    this.#balances.set(balanceKey(accountRefId, productCode, meterCode), balance);
  }

  // Usage events

  /** Every recorded usage event, in recording order. */
  get usageEvents(): UsageEventRecord[] {
    return [...this.#usage.values()];
  }

  /** A usage event by its event_key. */
  usageEvent(eventKey: string): UsageEventRecord | undefined {
    return this.#usage.get(eventKey);
  }

  /**
   * Records a usage event. Events are immutable: an event_key already recorded returns the
   * original event unchanged.
   */
  recordUsage(input: UsageEventInput): UsageEventRecord {
    const existing = this.#usage.get(input.event_key);
    if (existing) return existing;
    // Stamped to the millisecond, so a summary's inclusive bounds are exact around it.
    const event: UsageEventRecord = {
      metadata: null,
      timestamp: this.#now().toISOString(),
      ...defined(input),
    };
    this.#usage.set(event.event_key, event);
    return event;
  }

  /** Sum of the recorded quantities of a meter in an inclusive time range. */
  usageTotal(accountRefId: string, productCode: string, meterCode: string, range: TimeRange = {}): number {
    let total = 0;
    for (const event of this.#usage.values()) {
      if (
        event.account_ref_id !== accountRefId ||
        event.product_code !== productCode ||
        event.meter_code !== meterCode
      ) {
        continue;
      }
      const at = Date.parse(event.timestamp);
      if (range.start !== undefined && at < range.start) continue;
      if (range.end !== undefined && at > range.end) continue;
      total += event.quantity;
    }
    return total;
  }

  #requireAccount(accountRefId: string): void {
    if (!this.#accounts.has(accountRefId)) throw new Error(`Unknown account ${accountRefId}`);
  }
}
