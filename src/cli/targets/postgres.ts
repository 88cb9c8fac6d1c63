import { type Db, driverOf } from '../../postgres/driver.js';
import { postgresSpool } from '../../postgres/spool.js';
import { DEFAULT_TABLE, isDefaultTable, serviceTable } from '../../postgres/spool-ddl.js';
import { DEFAULT_SCHEMA, qualifiedName, tableExists } from '../../postgres/tables.js';
import type { SpoolFlags } from '../args.js';
import { CliFailure, messageOf } from '../fail.js';
import { redactUrl } from '../url-secrets.js';
import { missingDriver, optionalImport, within } from './load.js';
import type { Backlog, OtherSpool, SpoolTarget, TargetOptions } from './target.js';

type PgModule = typeof import('pg');

/** What `schema.table` holds: rows not acknowledged, and the oldest one's age. */
async function tableBacklog(db: Db, schema: string, table: string): Promise<Backlog> {
  if (!(await tableExists(db, schema, table))) return { present: false };
  const [row] = await db.query<{ n: string; oldest_ms: string | null }>(
    `SELECT count(*)::text AS n,
            floor(extract(epoch FROM clock_timestamp() - min(created_at)) * 1000)::text AS oldest_ms
       FROM ${qualifiedName(schema, table)} WHERE acked_at IS NULL`,
  );
  const oldest = row?.oldest_ms;
  return {
    present: true,
    waiting: Number(row?.n ?? 0),
    oldestMs: oldest == null ? undefined : Number(oldest),
  };
}

/** The default tables of other services in `schema`, beside `table`. */
async function otherTables(db: Db, schema: string, table: string): Promise<OtherSpool[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT c.relname::text AS name FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1::text AND c.relkind IN ('r', 'p') AND c.relname LIKE 'billing\\_sdk\\_usage\\_outbox%'
      ORDER BY 1`,
    [schema],
  );
  const out: OtherSpool[] = [];
  for (const { name } of rows) {
    if (!isDefaultTable(name) || name === table) continue;
    const { waiting = 0, oldestMs } = await tableBacklog(db, schema, name);
    out.push({ name, waiting, oldestMs });
  }
  return out;
}

/**
 * `--postgres <url>`: a node-postgres pool on the URL (the `pg` peer dependency), one query to show
 * the database answers, and the `postgresSpool` on it: on `--table`, else on the default table of
 * `options.service`. A bad `--table`/`--schema`, a missing `pg`
 * or a database out of reach is a {@link CliFailure} (exit 2).
 */
export async function postgresTarget(
  flags: Extract<SpoolFlags, { kind: 'postgres' }>,
  options: TargetOptions,
): Promise<SpoolTarget> {
  const schema = flags.schema ?? DEFAULT_SCHEMA;
  const table = flags.table ?? (options.service ? serviceTable(options.service) : DEFAULT_TABLE);
  const where = redactUrl(flags.url);
  const module = await optionalImport<PgModule>('pg', () => import('pg'));
  if (!module) throw missingDriver('--postgres', 'the pg package', 'pg');
  const { Pool } = (module as PgModule & { default?: PgModule }).default ?? module;
  const pool = new Pool({
    connectionString: flags.url,
    max: options.connections,
    connectionTimeoutMillis: 5_000,
  });
  // An idle connection that breaks is an 'error' event of the pool: the spool's next step sees it.
  pool.on('error', () => {});
  let spool: ReturnType<typeof postgresSpool>;
  try {
    spool = postgresSpool(pool, { schema, table, consumer: flags.consumer });
    await within(10_000, 'PostgreSQL', pool.query('SELECT 1'));
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new CliFailure(`cannot use PostgreSQL at ${where}: ${messageOf(error)}`);
  }
  const db = driverOf(pool, 'billing-sdk', '--postgres');
  return {
    label: `PostgreSQL table ${schema}.${table} at ${where}`,
    spool,
    backlog: () => tableBacklog(db, schema, table),
    others: () => otherTables(db, schema, table),
    close: () => pool.end(),
  };
}
