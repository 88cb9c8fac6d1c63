import { InvalidRequestError, SpoolError } from '../core/errors/index.js';
import { checkOptions, integer, text } from '../internal/checks.js';
import type { Spool, SpoolEntry, SpooledEvent } from '../tracker/spool.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { driverOf, isUnavailable, type Sql, transactionOf } from './driver.js';
import { DEFAULT_TABLE, spoolDdlStatements } from './spool-ddl.js';
import { replaceRows } from './spool-replace.js';
import {
  ackRows,
  claimableCount,
  claimRows,
  insertEvents,
  isRowId,
  pendingIds,
  releaseLeases,
  type SpoolTable,
} from './spool-sql.js';
import { startHeartbeat } from './spool-upkeep.js';
import { Watcher } from './spool-watch.js';
import {
  DEFAULT_SCHEMA,
  ensureTable,
  identifier,
  makeTableIn,
  qualifiedName,
  tableExists,
} from './tables.js';

/** Options of {@link postgresSpool}. */
export interface PostgresSpoolOptions {
  /** The schema of the table, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /** The table every instance sending the same events shares. Default `'billing_sdk_usage_outbox'`. */
  table?: string | undefined;
  /** The channel inserts NOTIFY and relays LISTEN on. Default: the table's name. */
  channel?: string | undefined;
  /**
   * This instance's name in the rows it claims. Default: a random id per spool, so rows a dead
   * instance held are claimed by the others once their lease expired. A stable name per instance
   * (never shared by two instances running at once) lets the restarted instance take back its own
   * rows at once on `open()`.
   */
  consumer?: string | undefined;
  /**
   * How long a claimed row is held by the instance that claimed it, in ms: another instance claims
   * it (and sends it, with its original key) only once this lease expired. A live instance renews
   * its leases every third of this time, so only a dead or frozen one loses them. Default 30 000.
   */
  claimTtlMs?: number | undefined;
  /**
   * How often relays look for rows without being notified, in ms: the fallback when notifications
   * are lost (a dropped LISTEN connection, which is opened again meanwhile). Default 5 000.
   */
  pollMs?: number | undefined;
  /**
   * Keep acknowledged rows this long (ms, marked `acked_at`) instead of deleting them at once, for
   * audits; older ones are deleted in the background. Default: deleted when acknowledged.
   */
  retentionMs?: number | undefined;
}

const rules = {
  schema: [identifier],
  table: [identifier],
  channel: [identifier],
  consumer: [text],
  claimTtlMs: [integer(1, MAX_TIMER_MS)],
  pollMs: [integer(1, MAX_TIMER_MS)],
  retentionMs: [integer(1)],
};

/**
 * A durable {@link Spool} in a PostgreSQL table, shared by every instance of a service (a
 * transactional outbox): pass it as the `spool` option of `createUsageTracker`. Beyond the other
 * spools, `track(event, { transaction })` writes the event through the application's own transaction
 * ({@link Spool.appendIn}): the event exists if and only if that transaction commits.
 *
 * Relays claim rows with `FOR UPDATE SKIP LOCKED` and a lease of `claimTtlMs`; a relay that died
 * leaves rows another claims once the lease expired, and sends with the same keys (answered
 * `idempotent: true` if they had gone through). Every insert NOTIFYs `channel` (at commit, in the
 * inserting transaction); each spool LISTENs on one dedicated connection, polls every `pollMs` as
 * well, and listens again when that connection is lost. Acknowledged rows are deleted (or kept for
 * `retentionMs`). The table is made when missing at `open()` ({@link postgresSpoolDdl} gives its SQL).
 *
 * Every failure is a {@link SpoolError}: `'unavailable'` when Postgres cannot be reached or the
 * connection broke (the tracker reports it to `onError`, waits and tries again), `'io'` when
 * Postgres refused a statement (a privilege, a table changed under it), `'conflict'` from a replace.
 *
 * @param db - A node-postgres `Pool` or `Client` (`pg`), or a postgres.js `sql` (`postgres`), as
 * they are. Not closed here: the application owns it.
 * @throws {@link billing-sdk!InvalidRequestError} when an option is invalid, naming it, or when `db` is
 * neither driver.
 * @example
 * ```ts
 * import pg from 'pg';
 * import { BillingClient, createUsageTracker } from 'billing-sdk';
 * import { postgresSpool } from 'billing-sdk/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const tracker = createUsageTracker(new BillingClient(), { spool: postgresSpool(pool) });
 * const client = await pool.connect();
 * await client.query('BEGIN');
 * await client.query('INSERT INTO exports (id) VALUES ($1)', [exportId]);
 * await tracker.track(event, { transaction: client }); // one INSERT in this transaction
 * await client.query('COMMIT'); // ROLLBACK instead: the event never existed
 * client.release();
 * ```
 */
export function postgresSpool(db: unknown, options: PostgresSpoolOptions = {}): Spool {
  const driver = driverOf(db, 'postgresSpool', 'db');
  checkOptions('postgresSpool', options, rules);
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const tableName = options.table ?? DEFAULT_TABLE;
  const table: SpoolTable = {
    db: driver,
    name: qualifiedName(schema, tableName),
    channel: options.channel ?? tableName,
    consumer: options.consumer ?? `spool-${crypto.randomUUID()}`,
    claimTtlMs: options.claimTtlMs ?? 30_000,
    retentionMs: options.retentionMs,
    held: new Set(),
  };
  const watcher = new Watcher(driver, table.channel, options.pollMs ?? 5_000);
  return new PostgresSpool(table, watcher, {
    schema,
    table: tableName,
    stableConsumer: options.consumer !== undefined,
  });
}

/** Where a {@link PostgresSpool}'s table is, and whether its consumer name outlives a restart. */
interface Placement {
  schema: string;
  table: string;
  stableConsumer: boolean;
}

/** The spool {@link postgresSpool} makes: each step guarded (open, typed failures) over spool-sql.ts. */
class PostgresSpool implements Spool {
  readonly durable = true;
  #state: 'new' | 'opening' | 'open' | 'closed' = 'new';
  #stopHeartbeat = (): void => {};
  /** Whether the table is known to exist, committed: `appendIn` then needs no check. */
  #tableSeen = false;
  /** `take`s run one at a time: `held` says what was handed, and two at once would race on it. */
  #takes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly table: SpoolTable,
    private readonly watcher: Watcher,
    private readonly placement: Placement,
  ) {}

  async open(): Promise<void> {
    if (this.#state !== 'new') {
      const why = this.#state === 'closed' ? 'closed' : 'already open';
      throw new SpoolError('closed', `postgresSpool open: the spool is ${why}`);
    }
    this.#state = 'opening';
    try {
      await ensureTable(this.table.db, this.placement.schema, this.placement.table, this.#ddl());
      this.#tableSeen = true;
      if (this.placement.stableConsumer) await releaseLeases(this.table);
      await this.watcher.start();
    } catch (error) {
      this.#state = 'new';
      await this.watcher.stop();
      throw this.#failure('open', error);
    }
    this.#state = 'open';
    this.#stopHeartbeat = startHeartbeat(this.table);
  }

  append(events: readonly SpooledEvent[]): Promise<string[]> {
    return this.#guarded('append', () => insertEvents(this.table.db, this.table, events));
  }

  /**
   * Needs nothing but the caller's transaction, before `open()` too: not the spool's open, not a
   * connection of its own (the application's transactions may hold every one its pool has). On a
   * database without the table yet, the table is made in that transaction, under the DDL lock: a
   * rollback takes it away with the event, and the next call makes it again.
   */
  appendIn(transaction: unknown, events: readonly SpooledEvent[]): Promise<string[]> {
    return this.#guarded(
      'appendIn',
      async () => {
        const sql = transactionOf(transaction, 'postgresSpool.appendIn', 'transaction');
        await this.#tableIn(sql);
        return insertEvents(sql, this.table, events);
      },
      'new',
    );
  }

  /** Makes the table in `tx` unless it was seen committed already (by open, or an earlier call). */
  async #tableIn(tx: Sql): Promise<void> {
    if (this.#tableSeen) return;
    // Seen here, it was committed by someone: it stays. Made here, it is ours only if tx commits.
    if (await tableExists(tx, this.placement.schema, this.placement.table)) this.#tableSeen = true;
    else await makeTableIn(tx, this.#ddl());
  }

  #ddl(): string[] {
    return spoolDdlStatements(this.placement.schema, this.placement.table);
  }

  take(max: number): Promise<SpoolEntry[]> {
    const result = this.#takes.then(() => this.#guarded('take', () => this.#take(max)));
    this.#takes = result.catch(() => {});
    return result;
  }

  async #take(max: number): Promise<SpoolEntry[]> {
    const { table } = this;
    if (!(max >= 1)) return [];
    const { entries, unreadable } = await claimRows(table, Math.floor(Math.min(max, 1e6)));
    // Not an event a spool wrote: left, it would be claimed and fail again for ever.
    if (unreadable.length) await ackRows(table.db, table, unreadable).catch(() => {});
    // A lease of ours that expired before its renewal and was claimed again: handed once only.
    const fresh = entries.filter((entry) => !table.held.has(entry.id));
    for (const entry of fresh) table.held.add(entry.id);
    return fresh;
  }

  ack(ids: readonly string[]): Promise<void> {
    return this.#guarded('ack', async () => {
      // No longer renewed whatever happens: if the delete failed, the lease expires and the row is
      // sent again under its key (answered `idempotent: true`) rather than held for ever.
      for (const id of ids) this.table.held.delete(id);
      await ackRows(this.table.db, this.table, ids);
    });
  }

  async replace(members: readonly string[], aggregate: SpooledEvent): Promise<string> {
    const id = await this.#guarded('replace', () => {
      const bad = members.find((member) => !isRowId(member));
      if (bad !== undefined)
        throw new InvalidRequestError('postgresSpool.replace', [
          { field: 'members', message: `holds ${JSON.stringify(bad)}, not an id of this spool` },
        ]);
      return replaceRows(this.table, members, aggregate);
    });
    for (const member of members) this.table.held.delete(member);
    return id;
  }

  pending(ids: readonly string[]): Promise<string[]> {
    return this.#guarded('pending', () => pendingIds(this.table, ids));
  }

  /** Rows no relay holds now: what the next takes of any instance may hand (this one's included). */
  size(): Promise<number> {
    return this.#guarded('size', () => claimableCount(this.table));
  }

  watch(wake: () => void): () => void {
    return this.watcher.watch(wake);
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    const wasOpen = this.#state === 'open';
    this.#state = 'closed';
    this.#stopHeartbeat();
    await this.#takes;
    await this.watcher.stop();
    const { held } = this.table;
    // What this instance held and did not acknowledge: any relay may claim it now, not in claimTtlMs.
    if (wasOpen && held.size) await releaseLeases(this.table, [...held]).catch(() => {});
    held.clear();
  }

  /**
   * What a step rejects with when Postgres fails: a {@link SpoolError} naming the step and the table,
   * the driver's error as its `cause`. The spool's own typed errors pass as they are.
   */
  #failure(operation: string, error: unknown): SpoolError | InvalidRequestError {
    if (error instanceof SpoolError || error instanceof InvalidRequestError) return error;
    const message = error instanceof Error ? error.message : String(error);
    const where = `postgresSpool ${operation} on ${this.table.name}`;
    return isUnavailable(error)
      ? new SpoolError('unavailable', `${where}: Postgres is unavailable: ${message}`, { cause: error })
      : new SpoolError('io', `${where}: Postgres refused it: ${message}`, { cause: error });
  }

  /** Runs `step` once the spool is open; whatever fails in it rejects as a {@link SpoolError}. */
  async #guarded<T>(operation: string, step: () => Promise<T>, alsoIn?: 'new'): Promise<T> {
    if (this.#state !== 'open' && !(alsoIn && this.#state !== 'closed')) {
      const why = this.#state === 'closed' ? 'closed' : 'not open';
      throw new SpoolError('closed', `postgresSpool ${operation}: the spool is ${why}`);
    }
    try {
      return await step();
    } catch (error) {
      throw this.#failure(operation, error);
    }
  }
}
