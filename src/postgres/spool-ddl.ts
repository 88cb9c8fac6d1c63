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
/** The name of the dead-letter table beside the spool's table `table`. */
export const deadLetterTable = (table: string): string => `${table}_dead_letters`;

/**
 * The statements that make the dead-letter table beside the spool's `table`: one row per event
 * given up on, with the service's answer or error (`reason`), its attempts and times, until it is
 * replayed into the spool or dropped.
 */
export function deadLetterDdlStatements(schema: string, table: string): string[] {
  return withSchema(schema, [deadLetterTableStatement(schema, table)]);
}

function deadLetterTableStatement(schema: string, table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${qualifiedName(schema, deadLetterTable(table))} (
  id bigserial PRIMARY KEY,
  event jsonb NOT NULL,
  reason jsonb NOT NULL,
  attempts integer NOT NULL,
  first_attempt_at timestamptz NOT NULL,
  dead_lettered_at timestamptz NOT NULL DEFAULT now()
)`;
}

/**
 * The statements that make the spool's table (and its dead-letter table) when missing, one per element. Each row is an
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
    deadLetterTableStatement(schema, table),
  ]);
}

/**
 * The SQL that makes a `postgresSpool`'s table and its dead-letter table `<table>_dead_letters`
 * (and their schema, unless `public`), for a migration
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
