import { checkOptions, integer, text } from '../internal/checks.js';
import type { Spool, SpoolEntry, SpooledEvent } from '../tracker/spool.js';
import { type DeadLetterSteps, deadLetterSteps, Handout, SpoolCore } from '../tracker/spool-core.js';
import { checkStorable } from '../tracker/storable-event.js';
import type { ServiceScoped } from '../util/service-namespace.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { boundedDb } from './bounded.js';
import { driverOf, type Sql, transactionOf } from './driver.js';
import { isTransient } from './failure.js';
import {
  DEFAULT_TABLE,
  deadLetterDdlStatements,
  deadLetterTable,
  serviceTable,
  spoolDdlStatements,
} from './spool-ddl.js';
import { deadLetterStorage } from './spool-dead-letters.js';
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
import { upkeep } from './spool-upkeep.js';
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
  /**
   * The table every instance sending the same events shares. Default: one per service,
   * `'billing_sdk_usage_outbox_<namespace>'`, where the tracker (or `billing-sdk relay`) puts 16
   * hex characters of its client's namespace (a digest of its API key and base URL): two services
   * (a live and a sandbox gateway) on one database never send each other's events. A spool used on
   * its own, outside a tracker, uses `'billing_sdk_usage_outbox'`. A key rotation changes the
   * namespace: `billing-sdk doctor` names the old table while it holds events, and `billing-sdk
   * relay --table <it> --once` sends them with the new key. A name given here is used as it is.
   */
  table?: string | undefined;
  /** The channel inserts NOTIFY and relays LISTEN on. Default: the table's name (the service's, by default). */
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
  /**
   * How long each of the spool's own statements may wait for Postgres, in ms: one stuck behind a
   * lock (a migration's `LOCK TABLE`) or on a connection that stopped answering is cancelled and
   * fails as `SpoolError('unavailable')` (tried again later), so a take never holds `close()` past
   * it. Statements in the application's transaction (`track(event, { transaction })`) are the
   * application's, never bounded here. Default 5 000.
   */
  timeoutMs?: number | undefined;
}

const rules = {
  schema: [identifier],
  table: [identifier],
  channel: [identifier],
  consumer: [text],
  claimTtlMs: [integer(1, MAX_TIMER_MS)],
  pollMs: [integer(1, MAX_TIMER_MS)],
  retentionMs: [integer(1)],
  timeoutMs: [integer(1, MAX_TIMER_MS)],
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
 * `retentionMs`). An event the service refuses for good is moved, in one statement, into the
 * dead-letter table beside (`<table>_dead_letters`: the event, the service's answer or error,
 * attempts and times), where `deadLetters(spool)` lists, replays or drops it. The tables are made when missing at `open()`, or in the caller's transaction by an
 * `appendIn` that comes first ({@link postgresSpoolDdl} gives its SQL). `appendIn` needs neither
 * `open()` nor a connection of the spool's own.
 *
 * Every failure is a {@link SpoolError}: `'unavailable'` when trying again may pass (Postgres
 * cannot be reached, the connection broke, SQLSTATE classes 40, 53, 57 and `55P03`: the tracker
 * reports it to `onError`, waits and tries again), `'io'` when Postgres refused a statement for good
 * (a privilege, a table changed under it), `'conflict'` from a replace.
 *
 * Without a `table` option the spool is {@link ServiceScoped}: the tracker it is given to (and
 * `billing-sdk relay`) uses the table (and channel) of its client's service,
 * `billing_sdk_usage_outbox_<namespace>`, with its own dead-letter table, so two services on one
 * database never share one by default.
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
    db: boundedDb(driver, options.timeoutMs ?? 5_000),
    name: qualifiedName(schema, tableName),
    channel: options.channel ?? tableName,
    consumer: options.consumer ?? `spool-${crypto.randomUUID()}`,
    claimTtlMs: options.claimTtlMs ?? 30_000,
    retentionMs: options.retentionMs,
  };
  const watcher = new Watcher(driver, table.channel, options.pollMs ?? 5_000);
  const spool = new PostgresSpool(table, watcher, {
    schema,
    table: tableName,
    stableConsumer: options.consumer !== undefined,
  });
  // Only a default table is the service's to choose: a table the user named is where they said.
  if (options.table !== undefined) return spool;
  const scoped: ServiceScoped<Spool> = {
    forService: (service) => postgresSpool(db, { ...options, table: serviceTable(service) }),
  };
  return Object.assign(spool, scoped);
}

/** Where a {@link PostgresSpool}'s table is, and whether its consumer name outlives a restart. */
interface Placement {
  schema: string;
  table: string;
  stableConsumer: boolean;
}

/** The spool {@link postgresSpool} makes: the spool core's steps over spool-sql.ts. */
class PostgresSpool implements Spool {
  readonly durable = true;
  readonly #core: SpoolCore;
  #handout = new Handout();
  /** Whether the table is known to exist, committed: `appendIn` then needs no check. */
  #tableSeen = false;
  readonly deadLetter: DeadLetterSteps['deadLetter'];
  readonly listDeadLetters: DeadLetterSteps['listDeadLetters'];
  readonly replayDeadLetters: DeadLetterSteps['replayDeadLetters'];
  readonly dropDeadLetters: DeadLetterSteps['dropDeadLetters'];

  constructor(
    private readonly table: SpoolTable,
    private readonly watcher: Watcher,
    private readonly placement: Placement,
  ) {
    this.#core = new SpoolCore({ name: 'postgresSpool', place: `on ${table.name}`, transient: isTransient });
    const letters = qualifiedName(placement.schema, deadLetterTable(placement.table));
    ({
      deadLetter: this.deadLetter,
      listDeadLetters: this.listDeadLetters,
      replayDeadLetters: this.replayDeadLetters,
      dropDeadLetters: this.dropDeadLetters,
    } = deadLetterSteps(this.#core, deadLetterStorage(table, letters), () => this.#handout));
  }

  open(): Promise<void> {
    return this.#core.open(async () => {
      try {
        const { schema, table } = this.placement;
        await ensureTable(this.table.db, schema, table, this.#ddl());
        // A spool table made before dead letters were kept has none beside it yet.
        await ensureTable(
          this.table.db,
          schema,
          deadLetterTable(table),
          deadLetterDdlStatements(schema, table),
        );
        this.#tableSeen = true;
        if (this.placement.stableConsumer) await releaseLeases(this.table);
        await this.watcher.start();
      } catch (error) {
        await this.watcher.stop();
        throw error;
      }
      this.#handout = new Handout();
      this.#handout.startRenewal(this.table.claimTtlMs, upkeep(this.table));
    });
  }

  append(events: readonly SpooledEvent[]): Promise<string[]> {
    return this.#core.run('append', () => {
      checkStorable('postgresSpool.append', events);
      return insertEvents(this.table.db, this.table, events);
    });
  }

  /**
   * Needs nothing but the caller's transaction, before `open()` too: not the spool's open, not a
   * connection of its own (the application's transactions may hold every one its pool has). On a
   * database without the table yet, the table is made in that transaction, under the DDL lock: a
   * rollback takes it away with the event, and the next call makes it again.
   */
  appendIn(transaction: unknown, events: readonly SpooledEvent[]): Promise<string[]> {
    return this.#core.run(
      'appendIn',
      async () => {
        const sql = transactionOf(transaction, 'postgresSpool.appendIn', 'transaction');
        // Refused before any statement: a failed one would abort the caller's transaction.
        checkStorable('postgresSpool.appendIn', events);
        await this.#tableIn(sql);
        return insertEvents(sql, this.table, events);
      },
      true,
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
    return this.#handout.take(() => this.#core.run('take', () => this.#take(max)));
  }

  async #take(max: number): Promise<SpoolEntry[]> {
    const { table } = this;
    if (!(max >= 1)) return [];
    const { entries, unreadable } = await claimRows(table, Math.floor(Math.min(max, 1e6)));
    // Not an event a spool wrote: left, it would be claimed and fail again for ever.
    if (unreadable.length) await ackRows(table.db, table, unreadable).catch(() => {});
    return this.#handout.fresh(entries);
  }

  ack(ids: readonly string[]): Promise<void> {
    return this.#core.run('ack', async () => {
      // No longer renewed whatever happens: if the delete failed, the lease expires and the row is
      // sent again under its key (answered `idempotent: true`) rather than held for ever.
      this.#handout.drop(ids);
      await ackRows(this.table.db, this.table, ids);
    });
  }

  async replace(members: readonly string[], aggregate: SpooledEvent): Promise<string> {
    const id = await this.#core.run('replace', () => {
      this.#core.checkMembers(members, isRowId);
      return replaceRows(this.table, members, aggregate, (member, why) => this.#core.conflict(member, why));
    });
    this.#handout.drop(members);
    return id;
  }

  pending(ids: readonly string[]): Promise<string[]> {
    return this.#core.run('pending', () => pendingIds(this.table, ids));
  }

  /** Rows no relay holds now: what the next takes of any instance may hand (this one's included). */
  size(): Promise<number> {
    return this.#core.run('size', () => claimableCount(this.table));
  }

  watch(wake: () => void): () => void {
    return this.watcher.watch(wake);
  }

  close(): Promise<void> {
    return this.#core.close(async () => {
      const held = await this.#handout.stop();
      await this.watcher.stop();
      // What this instance held and did not acknowledge: any relay may claim it now, not in claimTtlMs.
      if (held.length) await releaseLeases(this.table, held).catch(() => {});
    });
  }
}
