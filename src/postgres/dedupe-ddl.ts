import { quoteIdentifier } from './driver.js';
import { ddlScript, qualifiedName, withSchema } from './tables.js';

/** Where a `postgresDedupeStore` keeps its rows. */
export interface PostgresDedupeDdlOptions {
  /** The schema of the table, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /** The table's name. Default `'billing_sdk_webhook_inbox'`. */
  table?: string | undefined;
}

/** The inbox's table when none is named. */
export const DEFAULT_INBOX_TABLE = 'billing_sdk_webhook_inbox';

/**
 * The statements that make the inbox's table when it is missing, one per element. One row per
 * `transaction_id`: `token` and `expires_at` are the claim (kept once done: they tell `complete`
 * whether the claim was still held), `done_at` is set once the event was processed, `answer` is
 * the gate's answer kept for its `idempotency.replay` (added to a table made before it). The index
 * finds what pruning deletes: done rows, and claims no one completed, older than `doneTtlMs`.
 */
export function dedupeDdlStatements(schema: string, table: string): string[] {
  const name = qualifiedName(schema, table);
  return withSchema(schema, [
    `CREATE TABLE IF NOT EXISTS ${name} (
  id text PRIMARY KEY,
  token text,
  expires_at timestamptz,
  done_at timestamptz,
  answer text
)`,
    answerColumn(name),
    `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_age`)} ON ${name} ((coalesce(done_at, expires_at)))`,
  ]);
}

/**
 * Adds the `answer` column to a table made before it had one: run by the store (once) before it
 * first stores or reads an answer, so a table only webhooks use is never altered.
 */
export function answerColumn(name: string): string {
  return `ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS answer text`;
}

/**
 * The SQL that makes a `postgresDedupeStore`'s table (and its schema, unless `public`), for a
 * migration tool: the store runs the same statements on first use when the table is missing, so
 * running them beforehand lets the application's database user do without the right to create tables.
 *
 * @param options - The same `schema` and `table` as given to `postgresDedupeStore`.
 * @returns Statements separated by `;`, each idempotent (`IF NOT EXISTS`).
 * @throws {@link billing-sdk!InvalidRequestError} when `schema` or `table` is not a plain
 * identifier (1 to 48 letters, digits or `_`, not starting with a digit), naming it.
 * @example
 * ```ts
 * import { postgresDedupeDdl } from 'billing-sdk/postgres';
 * await client.query(postgresDedupeDdl({ schema: 'billing' }));
 * ```
 */
export function postgresDedupeDdl(options: PostgresDedupeDdlOptions = {}): string {
  return ddlScript('postgresDedupeDdl', options, DEFAULT_INBOX_TABLE, dedupeDdlStatements);
}
