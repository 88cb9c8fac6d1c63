import { quoteIdentifier } from './driver.js';
import { ddlScript, qualifiedName, withSchema } from './tables.js';

/** Where a `postgresSpool` keeps its rows. */
export interface PostgresSpoolDdlOptions {
  /** The schema of the table, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /** The table's name. Default `'billing_sdk_usage_outbox'`. */
  table?: string | undefined;
}

/** The table when none is named. */
export const DEFAULT_TABLE = 'billing_sdk_usage_outbox';
/**
 * The statements that make the spool's table when it is missing, one per element. Each row is an
 * event not acknowledged yet (or, with a retention, acknowledged at `acked_at`); a relay holds a row
 * while `lease_until` is in the future. The partial index keeps a claim's scan on the rows still to
 * send, however many acknowledged rows a retention keeps.
 */
export function spoolDdlStatements(schema: string, table: string): string[] {
  const name = qualifiedName(schema, table);
  return withSchema(schema, [
    `CREATE TABLE IF NOT EXISTS ${name} (
  id bigserial PRIMARY KEY,
  event jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  claimed_by text,
  lease_until timestamptz,
  acked_at timestamptz
)`,
    `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_unacked`)} ON ${name} (id) WHERE acked_at IS NULL`,
    `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_acked`)} ON ${name} (acked_at) WHERE acked_at IS NOT NULL`,
  ]);
}

/**
 * The SQL that makes a `postgresSpool`'s table (and its schema, unless `public`), for a migration
 * tool: `postgresSpool` runs the same statements at `open()` when the table is missing, so running
 * them beforehand lets the application's database user do without the right to create tables.
 *
 * @param options - The same `schema` and `table` as given to `postgresSpool`.
 * @returns Statements separated by `;`, each idempotent (`IF NOT EXISTS`).
 * @throws {@link billing-sdk!InvalidRequestError} when `schema` or `table` is not a plain identifier (1 to 48
 * letters, digits or `_`, not starting with a digit), naming it.
 * @example
 * ```ts
 * import { postgresSpoolDdl } from 'billing-sdk/postgres';
 * await client.query(postgresSpoolDdl({ schema: 'billing' }));
 * ```
 */
export function postgresSpoolDdl(options: PostgresSpoolDdlOptions = {}): string {
  return ddlScript('postgresSpoolDdl', options, DEFAULT_TABLE, spoolDdlStatements);
}
