/**
 * The status lists of the reference, in its order: one home for the SDK (the list filters' rules,
 * the exported constants) and the mock server (its filters and records), in a module without zod so
 * the mock does not load the schemas to read them.
 */

/** The invoice statuses the reference lists, in its order; `InvoiceStatus` also admits others. */
export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;

/** The transaction statuses the reference lists, in its order; `TransactionStatus` also admits others. */
export const TRANSACTION_STATUSES = ['pending', 'completed', 'failed', 'cancelled'] as const;
