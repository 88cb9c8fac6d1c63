import type { InvoiceRecord, InvoiceStatus, SubscriptionRecord, TransactionStatus } from '../records.js';
import type { MockStore } from '../store.js';
import { openInvoices } from '../subscriptions.js';
import { addDays } from '../time.js';
import type { MockLifecycleEvent } from '../webhooks/payload.js';

/** A state change on an existing subscription, as the processor's event would leave it. */
type Change = (store: MockStore, subscription: SubscriptionRecord) => void;

function tierPrice(store: MockStore, subscription: SubscriptionRecord): string {
  return store.tier(subscription.product_manage_id, subscription.tier_label_name)?.price ?? '0.00';
}

/** A period invoice at the tier price, due at once: an open one is past due straight away. */
function addPeriodInvoice(
  store: MockStore,
  subscription: SubscriptionRecord,
  status: InvoiceStatus,
): InvoiceRecord {
  const now = store.now();
  return store.addInvoice({
    account_ref_id: subscription.account_ref_id,
    customer_email: store.account(subscription.account_ref_id)?.customer_email ?? '',
    product_manage_id: subscription.product_manage_id,
    processor_subscription_id: subscription.subscription_id,
    amount_due: Number(tierPrice(store, subscription)),
    status,
    due_date: now,
    period_start: now,
    period_end: addDays(now, 30),
  });
}

function addTransaction(
  store: MockStore,
  subscription: SubscriptionRecord,
  status: TransactionStatus,
  amount: number,
): void {
  store.addTransaction({ account_ref_id: subscription.account_ref_id, status, amount: amount.toFixed(2) });
}

function setActive(store: MockStore, subscription: SubscriptionRecord, isActive: boolean): void {
  store.setSubscriptionActive(subscription.subscription_id, isActive);
}

/**
 * What each event does to an existing subscription. The reference does not describe the
 * transitions, so these follow what a processor does and what the documented endpoints must then
 * show: status `is_active`, fix-subscription's url or empty body, invoices and transactions.
 * `subscription-created` is absent: it makes a new subscription instead of changing one.
 */
export const CHANGES: Record<Exclude<MockLifecycleEvent, 'subscription-created'>, Change> = {
  'payment-succeeded'(store, subscription) {
    // Settles what was owed; a renewal with nothing outstanding is a new, paid period invoice.
    const settled = openInvoices(store, subscription).map((invoice) =>
      store.setInvoiceStatus(invoice.processor_invoice_id, 'paid'),
    );
    if (settled.length === 0) settled.push(addPeriodInvoice(store, subscription, 'paid'));
    setActive(store, subscription, true);
    const total = settled.reduce((sum, invoice) => sum + invoice.amount_paid, 0);
    addTransaction(store, subscription, 'completed', total);
  },
  'payment-failed'(store, subscription) {
    const invoice = addPeriodInvoice(store, subscription, 'open');
    setActive(store, subscription, false);
    addTransaction(store, subscription, 'failed', invoice.amount_due);
  },
  'subscription-cancelled'(store, subscription) {
    // Nothing is owed on a cancelled subscription, so fix-subscription has nothing to point at.
    for (const invoice of openInvoices(store, subscription)) {
      store.setInvoiceStatus(invoice.processor_invoice_id, 'void');
    }
    subscription.cancel_at_period_end = false;
    setActive(store, subscription, false);
  },
  'subscription-cancel-at-period-end'(store, subscription) {
    // The period is paid for: access continues, only the end is scheduled.
    subscription.cancel_at_period_end = true;
    subscription.updated_at = store.now();
  },
  'subscription-incomplete'(store, subscription) {
    // The first payment failed: its invoice stays open (one is added when there is none yet).
    const invoice = openInvoices(store, subscription)[0] ?? addPeriodInvoice(store, subscription, 'open');
    setActive(store, subscription, false);
    addTransaction(store, subscription, 'failed', invoice.amount_due);
  },
};
