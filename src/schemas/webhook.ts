import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';
import { type OpenEnum, timestamp } from './common.js';

/** Event names: the reference shows `subscription-created`; others pass through as strings. */
export type WebhookEventName = OpenEnum<'subscription-created'>;

/** A lifecycle webhook as the service sends it. */
export interface WebhookEvent {
  event: WebhookEventName;
  /** Unique per webhook: a retry of the same delivery carries the same id. */
  transaction_id: string;
  account_ref_id: string;
  subscription_id: string;
  is_active: boolean;
  /** The tier's label name. */
  label_name: string;
  /** ISO 8601 UTC. */
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
