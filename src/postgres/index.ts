/**
 * `billing-sdk/postgres`: usage and webhook effects in the application's own PostgreSQL
 * transaction. `postgresSpool` is the usage tracker's durable spool in a table every instance shares
 * (a transactional outbox: `track(event, { transaction })` writes through the application's
 * transaction); `postgresDedupeStore` is the webhook handlers' inbox (with it, `onEvent(event,
 * { transaction })` commits its writes with the event's "done" mark); `postgresHoldStore` keeps
 * `createCreditHolds`' reservations where every instance counts them. `postgresSpoolDdl`,
 * `postgresDedupeDdl` and `postgresHoldDdl` give the tables' SQL for migration tools. Nothing here
 * imports a Postgres driver: pass a node-postgres `Pool` or `Client` (`pg` on npm) or a postgres.js
 * `sql` (`postgres` on npm) as they are.
 *
 * Every failure is typed: the spool rejects with a {@link SpoolError}, the inbox and the hold store
 * with a {@link StoreError}, each with a `code` (`'unavailable'` when Postgres cannot be reached); the
 * driver's own error is the `cause`.
 *
 * @module billing-sdk/postgres
 */

export { SpoolError, type SpoolErrorCode, StoreError, type StoreErrorCode } from '../core/errors/index.js';
export type { ServiceScoped } from '../util/service-namespace.js';
export { type PostgresDedupeDdlOptions, postgresDedupeDdl } from './dedupe-ddl.js';
export { type PostgresDedupeStoreOptions, postgresDedupeStore } from './dedupe-store.js';
export { type PostgresHoldDdlOptions, postgresHoldDdl } from './hold-ddl.js';
export { type PostgresHoldStoreOptions, postgresHoldStore } from './hold-store.js';
export { type PostgresSpoolOptions, postgresSpool } from './spool.js';
export { type PostgresSpoolDdlOptions, postgresSpoolDdl } from './spool-ddl.js';
