import {
  type Db,
  field,
  isPgClient,
  isPgPool,
  isPostgresJs,
  notADriver,
  type PgClient,
  type PgPool,
  type PostgresJs,
  pgSql,
  postgresJsSql,
  quoteIdentifier,
  type Sql,
} from './driver-shapes.js';

export { type Db, quoteIdentifier, type Sql } from './driver-shapes.js';
export { transactionOf } from './transaction.js';
export { isUnavailable } from './unavailable.js';

import { isUnavailable } from './unavailable.js';

/**
 * Runs `fn` between BEGIN and COMMIT on `client`; ROLLBACK when it throws. Resolves whether the
 * connection broke (a failed ROLLBACK), so a pool destroys that client rather than reuse it.
 */
async function inTransaction<T>(
  client: PgClient,
  fn: (tx: Sql, native: unknown) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown; broken: boolean }> {
  try {
    await client.query('BEGIN');
    const value = await fn(pgSql(client), client);
    await client.query('COMMIT');
    return { ok: true, value };
  } catch (error) {
    try {
      await client.query('ROLLBACK');
      return { ok: false, error, broken: isUnavailable(error) };
    } catch {
      return { ok: false, error, broken: true };
    }
  }
}

/**
 * LISTEN on a node-postgres client of our own (never one the application uses): `make` builds it
 * unconnected. Its `error` event always has a listener: an unhandled one would end the process.
 */
async function pgListen(
  make: () => PgClient,
  channel: string,
  onNotify: (payload: string) => void,
  onLost: (error: unknown) => void,
): Promise<() => Promise<void>> {
  const client = make();
  let state: 'listening' | 'stopped' | 'lost' = 'listening';
  const lost = (error: unknown): void => {
    if (state !== 'listening') return;
    state = 'lost';
    onLost(error);
  };
  client.on('error', (error: never) => lost(error));
  client.on('end', () => lost(new Error('LISTEN connection ended')));
  client.on('notification', (message: never) => {
    const { channel: from, payload } = message as { channel: string; payload?: string };
    if (from === channel && state === 'listening') onNotify(payload ?? '');
  });
  try {
    await client.connect();
    await client.query(`LISTEN ${quoteIdentifier(channel)}`);
  } catch (error) {
    state = 'stopped';
    await client.end().catch(() => {});
    throw error;
  }
  return async () => {
    if (state === 'stopped') return;
    state = 'stopped';
    await client.end().catch(() => {});
  };
}

/** The one queue of a single node-postgres client: a transaction never interleaves with another statement of ours. */
function serial(): <T>(step: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (step) => {
    const result = tail.then(step);
    tail = result.catch(() => {});
    return result;
  };
}

function pgPoolDb(pool: PgPool): Db {
  return {
    kind: 'pg',
    ...pgSql(pool),
    async transaction(fn) {
      const client = await pool.connect();
      // A connection lost while the client is out of the pool (while the application's part of the
      // transaction runs, say) is an 'error' event, which the pool hears only for idle clients:
      // unheard, it would end the process. The transaction's next statement fails instead.
      const ignore = (): void => {};
      client.on('error', ignore);
      const outcome = await inTransaction(client, fn);
      client.off?.('error', ignore);
      // A broken connection is destroyed rather than handed to the next caller.
      client.release?.(outcome.ok || !outcome.broken ? undefined : true);
      if (!outcome.ok) throw outcome.error;
      return outcome.value;
    },
    // A client of its own, not one of the pool's: the pool's size stays the application's.
    listen: (channel, onNotify, onLost) =>
      pgListen(() => new pool.Client(pool.options), channel, onNotify, onLost),
  };
}

/** A client's connection settings, to open another connection like it (its password is not enumerable). */
function configOf(client: PgClient): object {
  const parameters = client.connectionParameters ?? {};
  return { ...parameters, password: field(parameters, 'password') };
}

function pgClientDb(client: PgClient): Db {
  const queue = serial();
  const Client = client.constructor as new (config: object) => PgClient;
  return {
    kind: 'pg',
    query: (text, params, timeoutMs) => queue(() => pgSql(client).query(text, params, timeoutMs)),
    transaction: (fn) =>
      queue(async () => {
        const outcome = await inTransaction(client, fn);
        if (!outcome.ok) throw outcome.error;
        return outcome.value;
      }),
    // The application's client may be in its own transaction or end any time: listen on another.
    listen: (channel, onNotify, onLost) =>
      pgListen(() => new Client(configOf(client)), channel, onNotify, onLost),
  };
}

function postgresJsDb(sql: PostgresJs): Db {
  return {
    kind: 'postgres.js',
    ...postgresJsSql(sql),
    transaction: (fn) => (sql.begin as NonNullable<PostgresJs['begin']>)((tx) => fn(postgresJsSql(tx), tx)),
    async listen(channel, onNotify) {
      let listening = false;
      // postgres.js calls `onlisten` again each time it listens anew after a lost connection.
      const { unlisten } = await (sql.listen as NonNullable<PostgresJs['listen']>)(
        channel,
        (payload) => onNotify(payload ?? ''),
        () => {
          if (listening) onNotify('');
          listening = true;
        },
      );
      return async () => {
        await unlisten().catch(() => {});
      };
    },
  };
}

/**
 * node-postgres Pool / Client / pool client, or a postgres.js `sql`: anything else → InvalidRequestError
 * naming `field`. Never imports a driver (duck typing).
 */
export function driverOf(db: unknown, operation: string, field: string): Db {
  if (isPgPool(db)) return pgPoolDb(db);
  if (isPgClient(db)) return pgClientDb(db);
  if (isPostgresJs(db, false)) return postgresJsDb(db);
  throw notADriver(
    operation,
    field,
    'a node-postgres Pool or Client (pg), or a postgres.js sql (postgres), passed as is',
  );
}
