import { quoteIdentifier } from './driver.js';
import { ddlScript, qualifiedName, withSchema } from './tables.js';

/** Where a `postgresSpool` keeps its rows. */
export interface PostgresSpoolDdlOptions {
  /** The schema of the table, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /**
   * The table's name. Default `'billing_sdk_usage_outbox'`: the table of a spool used on its own.
   * A tracker's spool without a `table` uses its service's (`billing_sdk_usage_outbox_<16 hex>`,
   * which `billing-sdk doctor` names): to make the table ahead, give the spool a `table` and the same here.
   */
  table?: string | undefined;
}

/**
 * The table when none is named, as the spool uses it on its own (a script, a test); a tracker or
 * relay uses {@link serviceTable} instead. Earlier releases used it for every service: what is
 * left there is sent with `billing-sdk relay --table billing_sdk_usage_outbox`.
 */
export const DEFAULT_TABLE = 'billing_sdk_usage_outbox';

/**
 * The table (and channel) of a `postgresSpool` with no `table` given, in a tracker (or relay) of
 * the service `service` (its namespace, hex): the first 16 hex characters (64 bits) after the
 * default name, 41 characters in all, so the names derived from it (indexes, the dead-letter table)
 * stay within the 48 of an identifier option and Postgres's 63 bytes.
 */
export const serviceTable = (service: string): string => `${DEFAULT_TABLE}_${service.slice(0, 16)}`;

/** Whether `table` is a default table: a service's ({@link serviceTable}) or the bare one. */
export const isDefaultTable = (table: string): boolean =>
  /^billing_sdk_usage_outbox(_[0-9a-f]{16})?$/.test(table);
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
