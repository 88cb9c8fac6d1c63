import type {
  AccountRecord,
  InvoiceRecord,
  ProductRecord,
  SubscriptionRecord,
  TierRecord,
  TransactionRecord,
} from './records.js';
import type { MockStore } from './store.js';

/** A subscription tier as the API returns it (the documented fields only). */
export function tierWire(tier: TierRecord): Record<string, unknown> {
  return {
    label_name: tier.label_name,
    name: tier.name,
    description: tier.description,
    price: tier.price,
    billing_cycle: tier.billing_cycle,
    features: tier.features,
    is_popular: tier.is_popular,
    product_manage_id: tier.product_manage_id,
  };
}

/**
 * A product as the API returns it: the reference's Product fields only, `price` on single products
 * that have one. `product_code`, `saas_only`, `usage_model` and the meters stay in the record:
 * the reference lists them as catalog facts, not as fields of the answer, and a client tested
 * against the mock must not come to depend on them.
 */
export function productWire(product: ProductRecord): Record<string, unknown> {
  return {
    manage_id: product.manage_id,
    label_name: product.label_name,
    type: product.type,
    ...(product.type === 'single' && product.price !== undefined ? { price: product.price } : {}),
  };
}

/** An invoice as the API returns it; a relative hosted URL is resolved against the app URL. */
export function invoiceWire(invoice: InvoiceRecord, appUrl: string): Record<string, unknown> {
  return {
    processor_invoice_id: invoice.processor_invoice_id,
    account_ref_id: invoice.account_ref_id,
    status: invoice.status,
    is_paid: invoice.is_paid,
    amount_due: invoice.amount_due,
    amount_paid: invoice.amount_paid,
    currency: invoice.currency,
    customer_email: invoice.customer_email,
    invoice_date: invoice.invoice_date,
    due_date: invoice.due_date,
    period_start: invoice.period_start,
    period_end: invoice.period_end,
    hosted_invoice_url: absoluteUrl(invoice.hosted_invoice_url, appUrl),
    processor_subscription_id: invoice.processor_subscription_id,
    product_manage_id: invoice.product_manage_id,
    created_at: invoice.created_at,
    updated_at: invoice.updated_at,
  };
}

/** A transaction as the API returns it. */
export function transactionWire(transaction: TransactionRecord): Record<string, unknown> {
  return {
    transaction_uuid: transaction.transaction_uuid,
    account_ref_id: transaction.account_ref_id,
    status: transaction.status,
    amount: transaction.amount,
    currency: transaction.currency,
    customer_email: transaction.customer_email,
    created_at: transaction.created_at,
    updated_at: transaction.updated_at,
  };
}

function subscriptionTier(store: MockStore, subscription: SubscriptionRecord): Record<string, unknown> {
  const tier = store.tier(subscription.product_manage_id, subscription.tier_label_name);
  if (tier) return tierWire(tier);
  // A tier removed from the catalog after the subscription was made: still answer something typed.
  return tierWire({
    label_name: subscription.tier_label_name,
    name: subscription.tier_label_name,
    description: '',
    price: '0.00',
    billing_cycle: 'monthly',
    features: '',
    is_popular: false,
    product_manage_id: subscription.product_manage_id,
    tier_url_id: '',
  });
}

/**
 * The single form of account status (one subscription). A scheduled cancellation
 * (`cancel_at_period_end` of the record) is not shown: the reference has no field for it.
 */
export function statusSingleWire(
  store: MockStore,
  account: AccountRecord,
  subscription: SubscriptionRecord,
): Record<string, unknown> {
  return {
    account_ref_id: account.account_ref_id,
    is_active: subscription.is_active,
    customer_email: account.customer_email,
    created_at: subscription.created_at,
    updated_at: subscription.updated_at,
    subscription_tier: subscriptionTier(store, subscription),
  };
}

/** The multiple form of account status (several subscriptions). */
export function statusMultipleWire(
  store: MockStore,
  account: AccountRecord,
  subscriptions: SubscriptionRecord[],
): Record<string, unknown> {
  return {
    account_ref_id: account.account_ref_id,
    customer_email: account.customer_email,
    subscriptions: subscriptions.map((s) => ({
      is_active: s.is_active,
      created_at: s.created_at,
      updated_at: s.updated_at,
      subscription_tier: subscriptionTier(store, s),
    })),
    total_subscriptions: subscriptions.length,
  };
}

/** Resolves a path such as `/i/in_mock_0001` against the app URL; absolute URLs pass through. */
export function absoluteUrl(urlOrPath: string, appUrl: string): string {
  return new URL(urlOrPath, `${appUrl}/`).href;
}
