import {
  field,
  isFunction,
  isPgClient,
  isPostgresJs,
  notADriver,
  pgSql,
  postgresJsSql,
  type Sql,
} from './driver-shapes.js';

/** What this file reads of a Kysely `Transaction` (the `trx` of `db.transaction().execute`). */
interface KyselyTransaction {
  readonly isTransaction: true;
  executeQuery(query: object): Promise<{ rows: unknown[] }>;
}

function isKyselyTransaction(tx: unknown): tx is KyselyTransaction {
  return field(tx, 'isTransaction') === true && isFunction(tx, 'executeQuery');
}

/**
 * A Kysely transaction as a {@link Sql}: each statement as the compiled raw query Kysely's own
 * `CompiledQuery.raw` makes (its shape, built here so that nothing imports kysely), run on the
 * transaction's connection whatever dialect is under it.
 */
function kyselySql(trx: KyselyTransaction): Sql {
  return {
    query: async <T>(text: string, params: readonly unknown[] = []) => {
      const query = {
        sql: text,
        parameters: [...params],
        query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
        queryId: { queryId: `billing-sdk-${crypto.randomUUID()}` },
      };
      return (await trx.executeQuery(query)).rows as T[];
    },
  };
}

/**
 * The driver's transaction under a Drizzle one (the `tx` of `db.transaction`): Drizzle keeps it as
 * `tx.session.client` (a node-postgres client, or the postgres.js `tx`), private in its types.
 */
function drizzleClient(tx: unknown): unknown {
  if (!isFunction(tx, 'rollback') || !isFunction(tx, 'execute')) return undefined;
  return field(field(tx, 'session'), 'client');
}

/**
 * The caller's open transaction: a node-postgres client (inside BEGIN) or a postgres.js `tx` of
 * sql.begin → Sql that runs on it; else InvalidRequestError naming `field`. A Kysely `trx` and a
 * Drizzle `tx` (on node-postgres or postgres.js) are taken as they are too. A node-postgres Pool is
 * refused: each of its queries may run on another connection, outside the caller's transaction.
 */
export function transactionOf(tx: unknown, operation: string, field: string): Sql {
  if (isPgClient(tx)) return pgSql(tx);
  if (isPostgresJs(tx, true)) return postgresJsSql(tx);
  if (isKyselyTransaction(tx)) return kyselySql(tx);
  const drizzle = drizzleClient(tx);
  if (isPgClient(drizzle)) return pgSql(drizzle);
  if (isPostgresJs(drizzle, true)) return postgresJsSql(drizzle);
  throw notADriver(
    operation,
    field,
    'a node-postgres client inside BEGIN (a Client, or a client of pool.connect()), the tx of postgres.js sql.begin, a Kysely transaction or a Drizzle transaction',
  );
}
