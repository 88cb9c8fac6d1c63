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

/** Transaction states of the reference, in the order the reference lists them. */
export const TRANSACTION_STATUSES = ['pending', 'completed', 'failed', 'cancelled'] as const;
/** A transaction state; the `status` filter of the transactions list rejects anything else. */
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

/** Invoice states of the reference, in the order the reference lists them. */
export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;
/** An invoice state; the `status` filter of the invoice list rejects anything else. */
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/**
 * A catalog entry. Only `manage_id`, `label_name`, `type` and `price` are documented wire fields;
 * the rest drive the mock's rules (saas_only resolve, usage models, meters, hosted page ids).
 */
export interface ProductRecord {
  manage_id: string;
  /** Name used by `tiers/<name>/`, `resolve` (product_name / subscription_name) and status filters. */
  label_name: string;
  /** Sort key of `GET /products/` ("ordered by title"). */
  title: string;
  type: 'single' | 'subscription';
  /** Code used by entitlements, balances, debits and usage events. */
  product_code: string;
  /** Id of the hosted product page `{app_url}/p/<product_url_id>`. */
  product_url_id: string;
  /** Only saas_only entries resolve to a public URL. */
  saas_only: boolean;
  saas_mode: boolean;
  /** Decimal string; single products only. */
  price?: string;
  usage_model?: UsageModel;
  /** Meter codes that belong to this product. */
  meters: string[];
}

/** A subscription tier; every documented field plus the hosted tier page id. */
export interface TierRecord {
  label_name: string;
  name: string;
  description: string;
  price: string;
  billing_cycle: string;
  /** Comma-separated, as the reference shows it. */
  features: string;
  is_popular: boolean;
  product_manage_id: string;
  /** Id of the hosted tier page `{app_url}/t/<tier_url_id>`. */
  tier_url_id: string;
}

/** An account known to the service; unknown ids answer 404 on account-scoped endpoints. */
export interface AccountRecord {
  account_ref_id: string;
  customer_email: string;
  created_at: string;
}

/** One subscription of an account to a tier of a subscription product. */
export interface SubscriptionRecord {
  /** Processor subscription id; invoices of the subscription carry it as `processor_subscription_id`. */
  subscription_id: string;
  account_ref_id: string;
  product_manage_id: string;
  tier_label_name: string;
  is_active: boolean;
  /**
   * A cancellation is scheduled for the end of the paid period: still active until then. Not in
   * the reference; the status endpoint shows it (as an extra field) only while true.
   */
  cancel_at_period_end?: boolean;
  created_at: string;
  updated_at: string;
}

/** An invoice, with exactly the documented wire fields plus an optional description. */
export interface InvoiceRecord {
  processor_invoice_id: string;
  account_ref_id: string;
  status: InvoiceStatus;
  is_paid: boolean;
  amount_due: number;
  amount_paid: number;
  currency: string;
  customer_email: string;
  invoice_date: string;
  due_date: string;
  period_start: string | null;
  period_end: string | null;
  /** Absolute, or a path (e.g. `/i/in_mock_0001`) resolved against the app URL when served. */
  hosted_invoice_url: string;
  processor_subscription_id: string;
  product_manage_id: string;
  created_at: string;
  updated_at: string;
  /** Kept from `invoices/create`; not part of the wire invoice. */
  description?: string;
}

/** A transaction, with exactly the documented wire fields. */
export interface TransactionRecord {
  transaction_uuid: string;
  account_ref_id: string;
  status: TransactionStatus;
  amount: string;
  currency: string;
  customer_email: string;
  created_at: string;
  updated_at: string;
}

/**
 * What a debit and a usage event both carry: the body of `usage/credits/debit/` and
 * `usage/events/`, validated the same way and stored under the same `event_key` idempotency rule.
 */
export interface UsageFields {
  event_key: string;
  account_ref_id: string;
  product_code: string;
  meter_code: string;
  quantity: number;
  metadata: Record<string, unknown> | null;
}

/** An approved debit, stored under its event_key so that a replay answers the original result. */
export interface LedgerEntry extends UsageFields {
  created_at: string;
  /** HTTP status of the original answer. */
  status: number;
  /** Body of the original answer, replayed verbatim. */
  body: { approved: true; debited: number; remaining_balance: number };
}

/** A recorded (immutable) usage event of a postpaid product. */
export interface UsageEventRecord extends UsageFields {
  /** When the usage happened; `usage/summary` ranges compare against it. */
  timestamp: string;
}
