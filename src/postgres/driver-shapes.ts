import { InvalidRequestError } from '../core/errors/index.js';
import { StatementTimeout, withDeadline } from './statement-deadline.js';

// The driver shapes `billing-sdk/postgres` reads, duck-typed (no driver is ever imported), and the
// statement runners over them. driver.ts builds a Db on them; transaction.ts, a caller's transaction.

/** One SQL statement runner: rows of the result. */
export interface Sql {
  /**
   * Runs one parameterized statement (`$1`, `$2`…) and resolves with its rows; rejects with the
   * driver's error. With `timeoutMs`, rejects with a `StatementTimeout` once it passed without
   * an answer, and cancels the statement where the driver can (see statement-deadline.ts).
   */
  query<T = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    timeoutMs?: number,
  ): Promise<T[]>;
}

/** A database the SDK runs its own statements on: a node-postgres pool or client, or a postgres.js `sql`. */
export interface Db extends Sql {
  /**
   * Runs fn in a transaction on one connection: BEGIN … COMMIT, ROLLBACK when fn throws (rethrown).
   * `native` is the driver's own object of that transaction, for the application's statements: the
   * client inside `BEGIN` (node-postgres), or the `tx` of `sql.begin` (postgres.js).
   */
  transaction<T>(fn: (tx: Sql, native: unknown) => Promise<T>): Promise<T>;
  /**
   * LISTEN on a dedicated connection; onNotify on each notification; onLost when that connection dies
   * (the caller reconnects by calling listen again). Resolves once listening, with a stop function.
   * postgres.js listens again by itself after a lost connection: there `onLost` is never called, and
   * `onNotify('')` tells that it listens again (notifications sent meanwhile were missed).
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onLost: (error: unknown) => void,
  ): Promise<() => Promise<void>>;
  /** Which driver runs the statements. */
  readonly kind: 'pg' | 'postgres.js';
}

/** What the SDK reads of a node-postgres `Client` (or a pool's client): never imported, duck-typed. */
export interface PgClient {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(event: string, listener: (...args: never[]) => void): unknown;
  removeAllListeners?(event?: string): unknown;
  off?(event: string, listener: (...args: never[]) => void): unknown;
  release?(destroy?: boolean | Error): void;
  connectionParameters?: object;
}

/** What the SDK reads of a node-postgres `Pool`. */
export interface PgPool {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgClient>;
  options: object;
  Client: new (config: object) => PgClient;
}

/** What the SDK reads of a postgres.js `sql` (or the `tx` of `sql.begin`). */
export interface PostgresJs {
  unsafe(text: string, params?: unknown[]): Promise<unknown[]>;
  begin?<T>(fn: (tx: PostgresJs) => Promise<T>): Promise<T>;
  listen?(
    channel: string,
    fn: (payload: string) => void,
    onlisten?: () => void,
  ): Promise<{ unlisten(): Promise<void> }>;
  savepoint?: unknown;
}

/** Reads `key` of `value` without letting a throwing getter or a revoked proxy escape. */
export function field(value: unknown, key: string): unknown {
  try {
    return (value as Record<string, unknown> | null | undefined)?.[key];
  } catch {
    return undefined;
  }
}

/** Whether `value[key]` is a function (read through {@link field}). */
export const isFunction = (value: unknown, key: string): boolean => typeof field(value, key) === 'function';

/**
 * A node-postgres `Pool`: `totalCount` and its `Client` class tell it from a client, which has
 * `query` and `connect` too.
 */
export function isPgPool(db: unknown): db is PgPool {
  return (
    isFunction(db, 'query') &&
    isFunction(db, 'connect') &&
    isFunction(db, 'Client') &&
    typeof field(db, 'options') === 'object' &&
    typeof field(db, 'totalCount') === 'number'
  );
}

/** A node-postgres `Client` or a pool's client: its `connectionParameters` tell it from a pool. */
export function isPgClient(db: unknown): db is PgClient {
  return (
    isFunction(db, 'query') &&
    isFunction(db, 'connect') &&
    isFunction(db, 'on') &&
    typeof field(db, 'connectionParameters') === 'object'
  );
}

/** A postgres.js `sql` (the top level, with `begin` and `listen`) or, with `tx`, the `tx` of `sql.begin`. */
export function isPostgresJs(db: unknown, tx: boolean): db is PostgresJs {
  if (typeof db !== 'function' || !isFunction(db, 'unsafe')) return false;
  return tx ? isFunction(db, 'savepoint') : isFunction(db, 'begin') && isFunction(db, 'listen');
}

/** A node-postgres client as a {@link Sql}: its statements run on its connection, as they come. */
export function pgSql(client: Pick<PgClient, 'query'>): Sql {
  return {
    query: async <T>(text: string, params: readonly unknown[] = [], timeoutMs?: number) => {
      if (timeoutMs === undefined) return (await client.query(text, [...params])).rows as T[];
      // node-postgres's own read timeout frees the call: a pool destroys the client it failed on.
      const config = { text, values: [...params], query_timeout: timeoutMs } as unknown as string;
      // Its timer and the deadline share the bound, and either may fire first: its failure (a bare
      // Error with no code) is the statement timing out too, transient like any StatementTimeout.
      const answer = client.query(config).catch((error: unknown) => {
        throw error instanceof Error && error.message === 'Query read timeout'
          ? new StatementTimeout(timeoutMs)
          : error;
      });
      return (await withDeadline(answer, timeoutMs)).rows as T[];
    },
  };
}

/** A postgres.js `sql` or `tx` as a {@link Sql}. */
export function postgresJsSql(sql: PostgresJs): Sql {
  return {
    query: async <T>(text: string, params: readonly unknown[] = [], timeoutMs?: number) => {
      const pending = sql.unsafe(text, [...params]) as PostgresJsQuery;
      if (timeoutMs === undefined) return [...(await pending)] as T[];
      // postgres.js cancels a statement under way (a CancelRequest on a connection of its own).
      return [...(await withDeadline(pending, timeoutMs, () => cancelQuery(pending)))] as T[];
    },
  };
}

/** The {@link InvalidRequestError} of a value that is no database the SDK can use. */
export function notADriver(operation: string, field: string, what: string): InvalidRequestError {
  return new InvalidRequestError(operation, [{ field, message: `must be ${what}` }]);
}

/** An SQL identifier, double-quoted (a `"` inside doubled): safe whatever it holds. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A postgres.js query as {@link cancelQuery} reads it. */
type PostgresJsQuery = Promise<unknown[]> & {
  cancel?: () => unknown;
  canceller?: ((query: unknown) => unknown) | null;
};

/**
 * Cancels a postgres.js query, its CancelRequest's outcome handed back. postgres.js 3.4's
 * `Query.cancel()` calls its `canceller` and drops the promise it answers, which rejects when the
 * CancelRequest's connection is reset (`read ECONNRESET`): an unhandled rejection, which ends a
 * Node process by default. So the canceller is called here, as `cancel()` calls it, and its promise
 * returned for {@link withDeadline} to handle; a version without one is cancelled the public way.
 */
function cancelQuery(query: PostgresJsQuery): unknown {
  const { canceller } = query;
  if (typeof canceller !== 'function') return query.cancel?.();
  query.canceller = null;
  return canceller.call(query, query);
}
