import * as z from 'zod/mini';
import type { Schema } from '../internal/schema.js';
import { type OpenEnum, timestamp } from './common.js';

import { TRANSACTION_STATUSES } from './statuses.js';

export { TRANSACTION_STATUSES };

/**
 * Status of a transaction: one of {@link TRANSACTION_STATUSES}, or another string the service may add
 * later.
 */
export type TransactionStatus = OpenEnum<(typeof TRANSACTION_STATUSES)[number]>;

/** A payment transaction of an account, as `transactions.list` returns it. */
export interface Transaction {
  /** The service's id of the transaction, a UUID string. */
  transaction_uuid: string;
  /** Your identifier of the account, echoed by the service. */
  account_ref_id: string;
  /**
   * One of `pending`, `completed`, `failed`, `cancelled` (the reference's list). An open enum: a
   * value the service adds later is kept as a string. Transitions are not stated by the reference.
   */
  status: TransactionStatus;
  /**
   * Amount of the transaction as a decimal string (the reference types it `string (decimal)`), e.g.
   * `"19.00"` in the SDK's mock. Keep it as a string or hand it to a decimal library; do not
   * `parseFloat` money. The reference gives no example and states neither the number of decimal
   * places, nor the unit (a decimal string suggests major units), nor whether refunds or failed
   * payments carry a sign. The SDK checks only that it is a string. Its currency is
   * {@link Transaction.currency}.
   */
  amount: string;
  /**
   * Currency of `amount`: a lowercase currency code (the reference's words), e.g. `usd`. The
   * reference does not name the code list.
   */
  currency: string;
  /** The customer's e-mail address; the reference says e-mail addresses appear for identification only. */
  customer_email: string;
  /** When the service created the transaction: an ISO 8601 UTC string (format not checked by the SDK). */
  created_at: string;
  /** When the transaction last changed (e.g. its status): an ISO 8601 UTC string. */
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
