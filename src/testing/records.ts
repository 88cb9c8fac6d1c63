import { INVOICE_STATUSES, TRANSACTION_STATUSES } from '../schemas/statuses.js';
/**
 * The mock's data model. Field names follow the wire (snake_case) so that records serialise with
 * little mapping and tests can compare them with API responses directly.
 */

/** Usage models the reference lists; the debit and event endpoints accept different subsets. */
export type UsageModel =
  | 'prepaid_credits'
  | 'metered_postpaid'
  | 'included_overage'
  | 'tiered_usage'
  | 'volume_usage';

/** Usage models whose usage is reported after the fact through `POST /usage/events/`. */
export const POSTPAID_USAGE_MODELS: readonly UsageModel[] = [
  'metered_postpaid',
  'included_overage',
  'tiered_usage',
  'volume_usage',
];

export { INVOICE_STATUSES, TRANSACTION_STATUSES };

/** A transaction state; the `status` filter of the transactions list rejects anything else. */
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** An invoice state; the `status` filter of the invoice list rejects anything else. */
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/**
 * A catalog entry. Only `manage_id`, `label_name`, `type` and `price` are documented wire fields;
 * the rest drive the mock's rules (saas_only resolve, usage models, meters, hosted page ids).
 */
export interface ProductRecord {
  /** Unique manager id; tiers, invoices and subscriptions refer to it as `product_manage_id`. */
  manage_id: string;
  /** Name used by `tiers/<name>/`, `resolve` (product_name / subscription_name) and status filters. */
  label_name: string;
  /** Sort key of `GET /products/` ("ordered by title"). */
  title: string;
  /** `single` (one-time sale, may have a `price`) or `subscription` (has tiers). */
  type: 'single' | 'subscription';
  /** Code used by entitlements, balances, debits and usage events. */
  product_code: string;
  /** Id of the hosted product page `{app_url}/p/<product_url_id>`. */
  product_url_id: string;
  /** Only saas_only entries resolve to a public URL. */
  saas_only: boolean;
  /**
   * The reference's `saas_mode` of subscription products (those `resolve` serves by
   * `subscription_name`). Stored only: the mock's resolve checks `saas_only`, not this flag.
   */
  saas_mode: boolean;
  /** Decimal string, e.g. `'19.00'`; single products only. Served as the wire `price`. */
  price?: string | undefined;
  /**
   * How usage is billed: `prepaid_credits` products accept debits, the {@link POSTPAID_USAGE_MODELS}
   * accept usage events; absent for products without metering.
   */
  usage_model?: UsageModel | undefined;
  /** Meter codes that belong to this product. */
  meters: string[];
}

/** A subscription tier; every documented field plus the hosted tier page id. */
export interface TierRecord {
  /** Tier label, unique within its product; used by status filters, `resolve` and `fix-subscription`. */
  label_name: string;
  /** Display name. */
  name: string;
  /** Free-text description. */
  description: string;
  /** Decimal string, e.g. `'29.00'`, as the wire `price`. */
  price: string;
  /** `monthly` in the seed (the only value the reference shows). */
  billing_cycle: string;
  /** Comma-separated, as the reference shows it. */
  features: string;
  /** Whether the tier is marked as popular. */
  is_popular: boolean;
  /** `manage_id` of the subscription product the tier belongs to. */
  product_manage_id: string;
  /** Id of the hosted tier page `{app_url}/t/<tier_url_id>`. */
  tier_url_id: string;
}

/** An account known to the service; unknown ids answer 404 on account-scoped endpoints. */
export interface AccountRecord {
  /** The client's identifier of the account (the key of every account-scoped endpoint). */
  account_ref_id: string;
  /**
   * E-mail served with the account's status, invoices and transactions, and matched by the invoice `email`
   * filter.
   */
  customer_email: string;
  /** ISO 8601 UTC string. */
  created_at: string;
}

/** One subscription of an account to a tier of a subscription product. */
export interface SubscriptionRecord {
  /** Processor subscription id; invoices of the subscription carry it as `processor_subscription_id`. */
  subscription_id: string;
  /** The subscribing account. */
  account_ref_id: string;
  /** `manage_id` of the subscription product. */
  product_manage_id: string;
  /** `label_name` of the tier subscribed to (a tier of `product_manage_id`). */
  tier_label_name: string;
  /** Served as `is_active` by the status endpoint and in webhooks. */
  is_active: boolean;
  /**
   * A cancellation is scheduled for the end of the paid period: still active until then. Kept in
   * the store only; the reference has no field for it, so no endpoint serves it.
   */
  cancel_at_period_end?: boolean | undefined;
  /** ISO 8601 UTC string. */
  created_at: string;
  /** ISO 8601 UTC string; the status endpoint's `updated_at`. */
  updated_at: string;
}

/** An invoice, with exactly the documented wire fields plus an optional description. */
export interface InvoiceRecord {
  /** Unique id; generated (`in_mock_0001`, …) when not given. */
  processor_invoice_id: string;
  /** The account billed. */
  account_ref_id: string;
  /** One of the reference's five invoice statuses. */
  status: InvoiceStatus;
  /** Served as is; defaults to `status === 'paid'`. */
  is_paid: boolean;
  /**
   * A JSON number, served as is. The demo seed uses major units (`29` for the `'29.00'` tier), a
   * choice of the mock: the reference does not state the unit.
   */
  amount_due: number;
  /** A JSON number in the same unit as `amount_due`; defaults to `amount_due` when paid, else 0. */
  amount_paid: number;
  /** Lowercase currency code; default `usd`. */
  currency: string;
  /** The customer's e-mail, matched by the invoice list's `email` filter. */
  customer_email: string;
  /** ISO 8601 UTC string. */
  invoice_date: string;
  /** ISO 8601 UTC string. */
  due_date: string;
  /** ISO 8601 UTC string, or `null` (the seed uses `null` for one-off invoices). */
  period_start: string | null;
  /** ISO 8601 UTC string, or `null` (the seed uses `null` for one-off invoices). */
  period_end: string | null;
  /** Absolute, or a path (e.g. `/i/in_mock_0001`) resolved against the app URL when served. */
  hosted_invoice_url: string;
  /** The subscription's `subscription_id`, or `''` when the invoice is not tied to a subscription. */
  processor_subscription_id: string;
  /** `manage_id` of the invoiced product. */
  product_manage_id: string;
  /** ISO 8601 UTC string. */
  created_at: string;
  /** ISO 8601 UTC string. */
  updated_at: string;
  /** Kept from `invoices/create`; not part of the wire invoice. */
  description?: string | undefined;
}

/** A transaction, with exactly the documented wire fields. */
export interface TransactionRecord {
  /** UUID string; generated deterministically when not given. */
  transaction_uuid: string;
  /** The paying account. */
  account_ref_id: string;
  /** One of the reference's four transaction statuses. */
  status: TransactionStatus;
  /** Decimal string, e.g. `'29.00'`, served as is. */
  amount: string;
  /** Lowercase currency code. */
  currency: string;
  /** The customer's e-mail; defaults to the account's. */
  customer_email: string;
  /** ISO 8601 UTC string. */
  created_at: string;
  /** ISO 8601 UTC string. */
  updated_at: string;
}

/**
 * What a debit and a usage event both carry: the body of `usage/credits/debit/` and
 * `usage/events/`, validated the same way and stored under the same `event_key` idempotency rule.
 */
export interface UsageFields {
  /** The caller's idempotency key: a second call with the same key replays the first result. */
  event_key: string;
  /** The account charged or metered. */
  account_ref_id: string;
  /** `product_code` of the product. */
  product_code: string;
  /** A meter of that product. */
  meter_code: string;
  /** A positive integer count of the meter's units. */
  quantity: number;
  /** The caller's own JSON object, kept as sent; `null` when none was sent. */
  metadata: Record<string, unknown> | null;
}

/** An approved debit, stored under its event_key so that a replay answers the original result. */
export interface LedgerEntry extends UsageFields {
  /** When the debit was approved (store clock), ISO 8601 UTC string. */
  created_at: string;
  /** HTTP status of the original answer. */
  status: number;
  /** Body of the original answer, replayed verbatim. */
  body: {
    /** Always `true`: only approved debits are stored. */
    approved: true;
    /** Credits taken. */
    debited: number;
    /** Balance right after this debit. */
    remaining_balance: number;
  };
}

/** A recorded (immutable) usage event of a postpaid product. */
export interface UsageEventRecord extends UsageFields {
  /** When the usage happened; `usage/summary` ranges compare against it. */
  timestamp: string;
}

/** Fields needed to add an account; `created_at` defaults to the store clock. */
export type AccountInput = Pick<AccountRecord, 'account_ref_id' | 'customer_email'> & Partial<AccountRecord>;

/** Fields needed to add a subscription; the id and timestamps are generated when omitted. */
export type SubscriptionInput = Pick<
  SubscriptionRecord,
  'account_ref_id' | 'product_manage_id' | 'tier_label_name' | 'is_active'
> &
  Partial<SubscriptionRecord>;

/**
 * Fields needed to add an invoice. Defaults: status `open`, `is_paid`/`amount_paid` derived from
 * the status, currency `usd`, dates from the store clock, due 30 days after the invoice date,
 * no period, no subscription, hosted URL `/i/<processor_invoice_id>` on the app.
 */
export type InvoiceInput = Pick<
  InvoiceRecord,
  'account_ref_id' | 'product_manage_id' | 'amount_due' | 'customer_email'
> &
  Partial<InvoiceRecord>;

/** Fields needed to add a transaction; the UUID and timestamps are generated when omitted. */
export type TransactionInput = Pick<TransactionRecord, 'account_ref_id' | 'status' | 'amount'> &
  Partial<TransactionRecord>;

/** Fields needed to record a usage event; `timestamp` defaults to the store clock. */
export type UsageEventInput = Omit<UsageEventRecord, 'timestamp' | 'metadata'> &
  Partial<Pick<UsageEventRecord, 'timestamp' | 'metadata'>>;
