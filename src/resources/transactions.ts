import type { RequestOptions } from '../core/options.js';
import type { PageEnvelope, PagePromise } from '../core/pagination.js';
import { oneOf, pageRules, required, segment } from '../internal/checks.js';
import { endpoint } from '../internal/endpoint.js';
import { APIResource } from '../internal/resource.js';
import { path } from '../internal/url.js';
import { envelope } from '../schemas/common.js';
import { TRANSACTION_STATUSES, type Transaction, TransactionSchema } from '../schemas/transaction.js';

/** Parameters of {@link Transactions.list}. */
export interface TransactionListParams {
  /** The account whose history to list. */
  account_ref_id: string;
  /** Only transactions in this status. */
  status?: (typeof TRANSACTION_STATUSES)[number] | undefined;
  /** Page to start from (1-based). Default 1. */
  page?: number | undefined;
  /** Items per page, 1–100. Default 20. */
  page_size?: number | undefined;
}

const listTransactions = endpoint<TransactionListParams, PageEnvelope<Transaction>>({
  operation: 'transactions.list',
  method: 'GET',
  rules: { account_ref_id: [required, segment], status: [oneOf(TRANSACTION_STATUSES)], ...pageRules },
  build: ({ account_ref_id, ...query }) => ({ path: path`transactions/${{ account_ref_id }}/`, query }),
  schema: envelope(TransactionSchema),
});

/** `billing.transactions`: payment history of an account. */
export class Transactions extends APIResource {
  /**
   * Lists an account's full transaction history, in the order the service sends it (the
   * reference does not state one).
   *
   * @example
   * ```ts
   * for await (const tx of billing.transactions.list({ account_ref_id: 'acct_1', status: 'completed' })) {
   *   console.log(tx.transaction_uuid, tx.amount, tx.currency);
   * }
   * ```
   */
  list(params: TransactionListParams, options?: RequestOptions): PagePromise<Transaction> {
    return this._list(listTransactions, params, options);
  }
}
