import * as z from 'zod/mini';
import type { Schema } from '../core/schema.js';
import { type OpenEnum, timestamp } from './common.js';

/** Documented transaction statuses. */
export const TRANSACTION_STATUSES = ['pending', 'completed', 'failed', 'cancelled'] as const;

/** Status of a transaction; other values the API may add are kept as strings. */
export type TransactionStatus = OpenEnum<(typeof TRANSACTION_STATUSES)[number]>;

/** A payment transaction of an account. */
export interface Transaction {
  transaction_uuid: string;
  account_ref_id: string;
  status: TransactionStatus;
  /** Decimal amount as a string, e.g. `"19.00"` (no float rounding). */
  amount: string;
  /** Lower-case currency code, e.g. `usd`. */
  currency: string;
  customer_email: string;
  /** ISO 8601 UTC. */
  created_at: string;
  /** ISO 8601 UTC. */
  updated_at: string;
}

/** Validates a {@link Transaction}; unknown fields are kept. */
export const TransactionSchema: Schema<Transaction> = z.looseObject({
  transaction_uuid: z.string(),
  account_ref_id: z.string(),
  status: z.string(),
  amount: z.string(),
  currency: z.string(),
  customer_email: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});
