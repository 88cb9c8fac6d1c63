import { StoreError } from '../core/errors/index.js';
import type { HoldStore, HoldStoreFree, HoldStoreReserve } from '../credits/store.js';
import { checkStoreArgs } from '../credits/store-args.js';
import { check, checkOptions, integer, required } from '../internal/checks.js';
import { withDeadline } from '../util/deadline.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { driverOf, type Sql } from './driver.js';
import { DEFAULT_HOLD_TABLE, holdDdlStatements, holdTables } from './hold-ddl.js';
import { holdStatements } from './hold-sql.js';
import { storeFailure } from './store-failure.js';
import { DEFAULT_SCHEMA, identifier, tablesOnce } from './tables.js';

/** Options of {@link postgresHoldStore}. */
export interface PostgresHoldStoreOptions {
  /** The schema of the store's tables, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /**
   * The prefix of the store's two tables, `<table>_ledgers` and `<table>_holds`, made when
   * missing (see `postgresHoldDdl`). Default `'billing_sdk_credit'`.
   */
  table?: string | undefined;
  /**
   * How long to wait for Postgres before the call fails, in ms (an integer): a reservation then
   * rejects with a {@link billing-sdk!StoreError} `'unavailable'` (holds never fail open), so a
   * gate answers 503 on time when the database hangs (a table locked by a migration, a connection
   * that never answers). Default 1 000.
   */
  timeoutMs?: number | undefined;
}

/** The default {@link PostgresHoldStoreOptions.timeoutMs}: a reservation is up to four round trips and a turn on its ledger's lock. */
const DEFAULT_TIMEOUT_MS = 1_000;

const OPERATION = 'postgresHoldStore';

/** One statement as hold-sql.ts gives it. */
type Statement = { text: string; params: unknown[] };

/**
 * A {@link billing-sdk!HoldStore} in PostgreSQL, for several instances of a service that debit the
 * same accounts: give it to `createCreditHolds` and a reservation is granted only while the
 * account's balance minus every unexpired hold of every instance covers it.
 *
 * A reservation is one transaction: it locks the ledger's row (reservations of one ledger take
 * turns; other ledgers never wait), then, in a statement of its own that sees every hold committed
 * before, drops the expired holds, sums the others and records the new one. Settles, releases,
 * balances and invalidations are one statement each (a settle, two in a transaction; an extend,
 * two in a transaction that takes the ledger's lock as a reservation does). Expiry and
 * balance age are timed by the database's clock, never the instances'. The tables, one row per
 * ledger and one per hold, are made under `schema` when missing, on first use (`postgresHoldDdl`
 * gives their SQL for migrations).
 *
 * When Postgres is down or does not answer within `timeoutMs`, every method rejects with a
 * {@link billing-sdk!StoreError} (`'unavailable'`, or `'unexpected_reply'` when the server refuses a
 * statement for good, such as a table of that name with other columns): the reservation fails,
 * never granted unchecked. A reservation that timed out may still land afterwards: its hold then
 * only holds credits back until its ttl. A resent reservation (same hold id) finds its hold and
 * counts it once.
 *
 * @param db - A node-postgres `Pool` (recommended: reservations of different ledgers then run side
 * by side) or `Client` (every statement waits its turn), or a postgres.js `sql`. Not closed here:
 * the application owns it.
 * @param options - See {@link PostgresHoldStoreOptions}.
 * @throws {@link billing-sdk!InvalidRequestError} when `db` is neither driver, or an option is
 * invalid, naming it.
 * @example
 * ```ts
 * import pg from 'pg';
 * import { BillingClient, createCreditHolds } from 'billing-sdk';
 * import { postgresHoldStore } from 'billing-sdk/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const holds = createCreditHolds(new BillingClient(), { store: postgresHoldStore(pool) });
 * const r = await holds.reserve({ account_ref_id: 'acct_1', product_code: 'ai-assistant', meter_code: 'credits', quantity: 2_000 });
 * if (r.approved) await r.hold.settle(1_234);
 * ```
 */
export function postgresHoldStore(db: unknown, options: PostgresHoldStoreOptions = {}): HoldStore {
  check('postgresHoldStore', { db }, { db: [required] });
  const driver = driverOf(db, 'postgresHoldStore', 'db');
  checkOptions('postgresHoldStore', options, {
    schema: [identifier],
    table: [identifier],
    timeoutMs: [integer(1, MAX_TIMER_MS)],
  });
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const table = options.table ?? DEFAULT_HOLD_TABLE;
  const sql = holdStatements(schema, table);
  const ready = tablesOnce(driver, schema, holdTables(table).holds, holdDdlStatements(schema, table));

  /**
   * `steps` once the tables exist, within `timeoutMs`; any failure a StoreError naming `step`. A
   * step answered late may still land: a reservation's hold then only holds credits back until its ttl.
   */
  const run = async <T>(step: string, steps: () => Promise<T>): Promise<T> => {
    const where = `postgresHoldStore.${step}`;
    const late = () =>
      new StoreError('unavailable', `${where}: Postgres did not answer within ${timeoutMs} ms`);
    try {
      return await withDeadline(
        ready().then(() => steps()),
        timeoutMs,
        late,
      );
    } catch (error) {
      throw storeFailure(where, error);
    }
  };
  const rows = <T>(on: Sql, statement: Statement) => on.query<T>(statement.text, statement.params);

  return {
    async reserve(ledger, hold, balanceTtlMs) {
      checkStoreArgs.reserve(OPERATION, ledger, hold, balanceTtlMs);
      return run('reserve', async () => {
        const [row] = await driver.transaction(async (tx) => {
          await rows(tx, sql.lock(ledger));
          return rows<ReserveRow>(tx, sql.reserve(ledger, hold.id, hold.quantity, hold.ttlMs, balanceTtlMs));
        });
        return reserveOutcome(row, hold.quantity);
      });
    },

    async setBalance(ledger, balance, fence) {
      checkStoreArgs.setBalance(OPERATION, ledger, balance, fence);
      return run('setBalance', async () => {
        await rows(driver, sql.setBalance(ledger, balance, fence));
      });
    },

    async settle(ledger, id, remaining, debited) {
      checkStoreArgs.settle(OPERATION, ledger, id, remaining, debited);
      return run('settle', () =>
        driver.transaction(async (tx): Promise<HoldStoreFree> => {
          // The ledger's lock first, then the hold's row: the order a reservation takes them in.
          const [settled] = await rows<{ balance: unknown }>(tx, sql.settled(ledger, remaining, debited));
          const [dropped] = await rows<{ live: unknown }>(tx, sql.drop(ledger, id));
          return { held: dropped?.live === true, balance: balanceOf(settled?.balance) };
        }),
      );
    },

    async release(ledger, id) {
      checkStoreArgs.release(OPERATION, ledger, id);
      return run('release', async (): Promise<HoldStoreFree> => {
        const [row] = await rows<{ held: unknown; balance: unknown }>(driver, sql.release(ledger, id));
        return { held: row?.held === true, balance: balanceOf(row?.balance) };
      });
    },

    async extend(ledger, id, ttlMs) {
      checkStoreArgs.extend(OPERATION, ledger, id, ttlMs);
      return run('extend', () =>
        driver.transaction(async (tx): Promise<boolean> => {
          await rows(tx, sql.lock(ledger));
          return (await rows(tx, sql.extend(ledger, id, ttlMs))).length === 1;
        }),
      );
    },

    async invalidate(account) {
      checkStoreArgs.invalidate(OPERATION, account);
      return run('invalidate', async () => {
        await rows(driver, sql.invalidate(account));
      });
    },
  };
}

/** The row of hold-sql.ts's `reserve` statement. */
interface ReserveRow {
  stale: unknown;
  mine: unknown;
  fence: unknown;
  available: unknown;
  granted: unknown;
  expired: unknown;
}

/** A reservation's answer from its row; a row of another shape is a StoreError. */
function reserveOutcome(row: ReserveRow | undefined, quantity: number): HoldStoreReserve {
  const expired = row?.expired;
  if (typeof expired !== 'number') throw unexpected('reserve', row);
  if (row?.stale === true) {
    if (typeof row.fence !== 'string') throw unexpected('reserve', row);
    return { status: 'stale', fence: row.fence, expired };
  }
  const available = row?.available;
  if (typeof available !== 'number') throw unexpected('reserve', row);
  // A resend finds its hold already counted in `available`.
  if (row?.mine === true) return { status: 'granted', available: Math.max(0, available), expired };
  if (row?.granted === true) return { status: 'granted', available: available - quantity, expired };
  return { status: 'refused', available: Math.max(0, available), expired };
}

/** A known balance (a float8 from Postgres) or `null`; anything else is a StoreError. */
function balanceOf(value: unknown): number | null {
  if (value === null || typeof value === 'number') return value;
  throw unexpected('balance', value);
}

function unexpected(step: string, row: unknown): StoreError {
  return new StoreError(
    'unexpected_reply',
    `postgresHoldStore.${step}: unexpected row ${JSON.stringify(row)}`,
  );
}
