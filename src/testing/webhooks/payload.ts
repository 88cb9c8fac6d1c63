/**
 * Event names the mock sends. The reference shows only `subscription-created` and lists the other
 * lifecycle changes in prose (payment succeeded, payment failed, cancellation, cancel at period
 * end, incomplete); these names follow that prose in the same kebab-case, so receivers under test
 * must not assume the list is closed.
 */
export const LIFECYCLE_EVENTS = [
  'subscription-created',
  'payment-succeeded',
  'payment-failed',
  'subscription-cancelled',
  'subscription-cancel-at-period-end',
  'subscription-incomplete',
] as const;

/** One of {@link LIFECYCLE_EVENTS}. */
export type MockLifecycleEvent = (typeof LIFECYCLE_EVENTS)[number];

/** A webhook body, exactly the reference's payload shape (nothing more, so receivers see what production sends). */
export interface MockWebhookPayload {
  /** Which lifecycle change happened. */
  event: MockLifecycleEvent;
  /** Unique per webhook; retries and `webhooks.redeliver()` repeat it, as the processor would. */
  transaction_id: string;
  /** The account whose subscription changed. */
  account_ref_id: string;
  /** The changed subscription's id (invoices of it carry the same id as `processor_subscription_id`). */
  subscription_id: string;
  /** The subscription's state after the change. */
  is_active: boolean;
  /** The tier's label name. */
  label_name: string;
  /** ISO 8601 UTC, from the store clock. */
  timestamp: string;
}
