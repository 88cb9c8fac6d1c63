import { checkOptions, type Rule } from '../internal/checks.js';
import { type Db, quoteIdentifier, type Sql } from './driver.js';

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

/** `statements` after the schema's own, unless `public` (which exists, and CREATE SCHEMA needs a privilege even then). */
export function withSchema(schema: string, statements: string[]): string[] {
  return schema === DEFAULT_SCHEMA
    ? statements
    : [`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`, ...statements];
}

/**
 * The one key every table the SDK makes is made under. `CREATE … IF NOT EXISTS` is not atomic
 * against a concurrent create (two can both fail on Postgres's catalogs), so creators take turns;
 * one key for every table, so a spool's and a store's creators never need to know of each other.
 */
const DDL_LOCK = 'billing-sdk:ddl';

/**
 * Whether `schema.table` exists, as `sql` sees it. Read from the catalog tables, not with
 * `to_regclass`: a lookup through Postgres's catalog cache leaves a "no such schema" entry that a
 * later `CREATE SCHEMA IF NOT EXISTS` of the same transaction may trust after the lock wait (it
 * then fails on a schema another creator committed meanwhile).
 */
export async function tableExists(sql: Sql, schema: string, table: string): Promise<boolean> {
  const [row] = await sql.query<{ present: unknown }>(
    `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1::text AND c.relname = $2::text) AS present`,
    [schema, table],
  );
  return row?.present === true;
}

/**
 * Runs `ddl` inside the open transaction `tx`, after taking the SDK's DDL lock (held until `tx`
 * ends: a concurrent creator waits, then finds what this one committed, or makes it itself when
 * this one rolled back).
 */
export async function makeTableIn(tx: Sql, ddl: readonly string[]): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1::text))', [DDL_LOCK]);
  for (const statement of ddl) await tx.query(statement);
}

/**
 * Makes `schema.table` with `ddl` when it is missing, in a transaction of its own; a table that
 * exists is left alone, so a migrated database needs no right to create.
 */
export async function ensureTable(
  db: Db,
  schema: string,
  table: string,
  ddl: readonly string[],
): Promise<void> {
  if (await tableExists(db, schema, table)) return;
  await db.transaction((tx) => makeTableIn(tx, ddl));
}

/**
 * What `postgresSpoolDdl` and `postgresDedupeDdl` return: `statements(schema, table)` for the
 * `schema` and `table` options (checked, named in the error, as the spool and store check them),
 * separated by `;`.
 */
export function ddlScript(
  operation: string,
  options: { schema?: string | undefined; table?: string | undefined },
  defaultTable: string,
  statements: (schema: string, table: string) => string[],
): string {
  checkOptions(operation, options, { schema: [identifier], table: [identifier] });
  return `${statements(options.schema ?? DEFAULT_SCHEMA, options.table ?? defaultTable).join(';\n')};\n`;
}

/**
 * `ensureTable` once per store: the table (`table`, made by `ddl` when missing) on first use; a
 * failure is retried on the next call. What every store of this folder starts its steps with.
 */
export function tablesOnce(
  db: Db,
  schema: string,
  table: string,
  ddl: readonly string[],
): () => Promise<void> {
  let made: Promise<void> | undefined;
  return () => {
    made ??= ensureTable(db, schema, table, ddl).catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}
