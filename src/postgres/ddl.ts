import { checkOptions, type Rule } from '../internal/checks.js';
import { quoteIdentifier } from './driver.js';

/** Where a `postgresSpool` keeps its rows. */
export interface PostgresSpoolDdlOptions {
  /** The schema of the table, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /** The table's name. Default `'billing_sdk_usage_outbox'`. */
  table?: string | undefined;
}

/** The table when none is named. */
export const DEFAULT_TABLE = 'billing_sdk_usage_outbox';
/** The schema when none is named. */
export const DEFAULT_SCHEMA = 'public';

/**
 * Names the SDK makes tables, indexes and channels under: letters, digits and `_`, not starting
 * with a digit, at most 48 characters, so the index names derived from a table's stay within
 * Postgres's 63-byte limit (longer ones are cut silently, and two cut alike would clash).
 */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/** An option naming a schema, table or channel (see {@link IDENTIFIER}). */
export const identifier: Rule = (v) =>
  typeof v === 'string' && IDENTIFIER.test(v)
    ? undefined
    : 'must be 1 to 48 letters, digits or _, not starting with a digit';

/** The table's name with its schema, each quoted: safe to put in any statement. */
export function qualifiedName(schema: string, table: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}

/**
 * The statements that make the spool's table when it is missing, one per element. Each row is an
 * event not acknowledged yet (or, with a retention, acknowledged at `acked_at`); a relay holds a row
 * while `lease_until` is in the future. The partial index keeps a claim's scan on the rows still to
 * send, however many acknowledged rows a retention keeps.
 */
export function spoolDdlStatements(schema: string, table: string): string[] {
  const name = qualifiedName(schema, table);
  const statements = [
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
  ];
  // `public` exists already, and CREATE SCHEMA needs a privilege on the database even when it does.
  if (schema !== DEFAULT_SCHEMA) statements.unshift(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
  return statements;
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
  checkOptions('postgresSpoolDdl', options, { schema: [identifier], table: [identifier] });
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const table = options.table ?? DEFAULT_TABLE;
  return `${spoolDdlStatements(schema, table).join(';\n')};\n`;
}
