import { check, oneOf, pageRules, required, segment } from '../core/checks.js';
import type { RequestOptions } from '../core/options.js';
import type { PagePromise } from '../core/pagination.js';
import type { ApiCore } from '../core/request.js';
import { path } from '../core/url.js';
import { envelope } from '../schemas/common.js';
import { TRANSACTION_STATUSES, type Transaction, TransactionSchema } from '../schemas/transaction.js';

/** Parameters of {@link Transactions.list}. */
export interface TransactionListParams {
  /** The account whose history to list. */
  account_ref_id: string;
  /** Only transactions in this status. */
  status?: (typeof TRANSACTION_STATUSES)[number];
  /** Page to start from (1-based). Default 1. */
  page?: number;
  /** Items per page, 1–100. Default 20. */
  page_size?: number;
}

const TransactionPage = envelope(TransactionSchema);
const rules = { account_ref_id: [required, segment], status: [oneOf(TRANSACTION_STATUSES)], ...pageRules };

/** `billing.transactions`: payment history of an account. */
export class Transactions {
  readonly #core: ApiCore;

  /** @internal */
  constructor(core: ApiCore) {
    this.#core = core;
  }

  /**
   * Lists an account's transactions, newest first.
   *
   * @example
   * ```ts
   * for await (const tx of billing.transactions.list({ account_ref_id: 'acct_1', status: 'completed' })) {
   *   console.log(tx.transaction_uuid, tx.amount, tx.currency);
   * }
   * ```
   */
  list(params: TransactionListParams, options?: RequestOptions): PagePromise<Transaction> {
    return this.#core.list(
      {
        operation: 'transactions.list',
        schema: TransactionPage,
        prepare: () => {
          const { account_ref_id, ...query } = check('transactions.list', params, rules);
          return { path: path`transactions/${account_ref_id}/`, query };
        },
      },
      options,
    );
  }
}
