import { driverOf } from '../../postgres/driver.js';
import { postgresSpool } from '../../postgres/spool.js';
import { DEFAULT_TABLE } from '../../postgres/spool-ddl.js';
import { DEFAULT_SCHEMA, qualifiedName, tableExists } from '../../postgres/tables.js';
import type { SpoolFlags } from '../args.js';
import { CliFailure, messageOf } from '../fail.js';
import { redactUrl } from '../url-secrets.js';
import { missingDriver, optionalImport, within } from './load.js';
import type { SpoolTarget, TargetOptions } from './target.js';

type PgModule = typeof import('pg');

/**
 * `--postgres <url>`: a node-postgres pool on the URL (the `pg` peer dependency), one query to show
 * the database answers, and the `postgresSpool` on it. A bad `--table`/`--schema`, a missing `pg`
 * or a database out of reach is a {@link CliFailure} (exit 2).
 */
export async function postgresTarget(
  flags: Extract<SpoolFlags, { kind: 'postgres' }>,
  options: TargetOptions,
): Promise<SpoolTarget> {
  const schema = flags.schema ?? DEFAULT_SCHEMA;
  const table = flags.table ?? DEFAULT_TABLE;
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
  const name = qualifiedName(schema, table);
  return {
    label: `PostgreSQL table ${schema}.${table} at ${where}`,
    spool,
    async backlog() {
      if (!(await tableExists(db, schema, table))) return { present: false };
      const [row] = await db.query<{ n: string; oldest_ms: string | null }>(
        `SELECT count(*)::text AS n,
                floor(extract(epoch FROM clock_timestamp() - min(created_at)) * 1000)::text AS oldest_ms
           FROM ${name} WHERE acked_at IS NULL`,
      );
      const oldest = row?.oldest_ms;
      return {
        present: true,
        waiting: Number(row?.n ?? 0),
        oldestMs: oldest == null ? undefined : Number(oldest),
      };
    },
    close: () => pool.end(),
  };
}
