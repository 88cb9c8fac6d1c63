import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import { type OpenEnum, timestamp } from './common.js';

/** Event names: the reference shows `subscription-created`; others pass through as strings. */
export type WebhookEventName = OpenEnum<'subscription-created'>;

/** A lifecycle webhook as the service sends it. */
export interface WebhookEvent {
  /**
   * The event's name. The reference shows only `subscription-created`; it names the other lifecycle
   * events (payment succeeded, payment failed, cancellation, cancel at period end, incomplete) in
   * prose only, so switch on the names you know and ignore the rest.
   */
  event: WebhookEventName;
  /**
   * A UUID string, unique per webhook: the reference says it "lets the receiver correlate or detect
   * retries". The reference does not relate it to {@link Transaction.transaction_uuid}.
   */
  transaction_id: string;
  /** Your identifier of the account, as originally supplied. */
  account_ref_id: string;
  /**
   * The subscription the event is about. The reference does not say whether it is the processor's
   * id (the one invoices carry as {@link Invoice.processor_subscription_id}).
   */
  subscription_id: string;
  /** Whether the subscription is active after the event; confirm with `accounts.status` when it matters. */
  is_active: boolean;
  /** The tier's label name. */
  label_name: string;
  /** When the event happened: an ISO 8601 UTC string. */
  timestamp: string;
}

/** Validates a {@link WebhookEvent}; unknown fields are kept. */
export const WebhookEventSchema: Schema<WebhookEvent> = z.looseObject({
  event: z.string(),
  transaction_id: z.string(),
  account_ref_id: z.string(),
  subscription_id: z.string(),
  is_active: z.boolean(),
  label_name: z.string(),
  timestamp,
});
