import { ddlScript, qualifiedName, withSchema } from './tables.js';

/** Where a `postgresHoldStore` keeps its rows. */
export interface PostgresHoldDdlOptions {
  /** The schema of the tables, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /**
   * The prefix of the store's two tables: `<table>_ledgers` and `<table>_holds`.
   * Default `'billing_sdk_credit'`.
   */
  table?: string | undefined;
}

/** The tables' prefix when none is named. */
export const DEFAULT_HOLD_TABLE = 'billing_sdk_credit';

/**
 * The two tables under the prefix `table`. The suffixes are short, so that with a 48-character
 * prefix (the most `identifier` allows) the names Postgres derives for their keys stay within its
 * 63-byte limit.
 */
export function holdTables(table: string): { ledgers: string; holds: string } {
  return { ledgers: `${table}_ledgers`, holds: `${table}_holds` };
}

/**
 * The statements that make the store's tables when missing, one per element. `ledgers`: one row
 * per (account, product, meter), the balance as last known (`balance`, `read_at`, null: never read
 * or invalidated), `epoch` moved by each invalidation and `debited` the credits its settles debited
 * so far (together the fence of a balance read: a read is lowered by what was debited since). `holds`: one row per unexpired (or not yet dropped) hold. The holds table is
 * made last: when it exists, both do.
 */
export function holdDdlStatements(schema: string, table: string): string[] {
  const names = holdTables(table);
  return withSchema(schema, [
    `CREATE TABLE IF NOT EXISTS ${qualifiedName(schema, names.ledgers)} (
  account text NOT NULL,
  product text NOT NULL,
  meter text NOT NULL,
  balance bigint,
  read_at timestamptz,
  epoch bigint NOT NULL DEFAULT 0,
  debited bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account, product, meter)
)`,
    `CREATE TABLE IF NOT EXISTS ${qualifiedName(schema, names.holds)} (
  account text NOT NULL,
  product text NOT NULL,
  meter text NOT NULL,
  id text NOT NULL,
  quantity bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (account, product, meter, id)
)`,
  ]);
}

/**
 * The SQL that makes a `postgresHoldStore`'s tables (and their schema, unless `public`), for a
 * migration tool: the store runs the same statements on first use when its tables are missing, so
 * running them beforehand lets the application's database user do without the right to create tables.
 *
 * @param options - The same `schema` and `table` as given to `postgresHoldStore`.
 * @returns Statements separated by `;`, each idempotent (`IF NOT EXISTS`).
 * @throws {@link billing-sdk!InvalidRequestError} when `schema` or `table` is not a plain
 * identifier (1 to 48 letters, digits or `_`, not starting with a digit), naming it.
 * @example
 * ```ts
 * import { postgresHoldDdl } from 'billing-sdk/postgres';
 * await client.query(postgresHoldDdl({ schema: 'billing' }));
 * ```
 */
export function postgresHoldDdl(options: PostgresHoldDdlOptions = {}): string {
  return ddlScript('postgresHoldDdl', options, DEFAULT_HOLD_TABLE, holdDdlStatements);
}
