import { StoreError } from '../core/errors/index.js';
import { check, checkOptions, required } from '../internal/checks.js';
import { durationMs } from '../internal/duration.js';
import {
  type ClaimOutcome,
  type DedupeStore,
  CLAIM_OUTCOMES as OUTCOMES,
  type TransactionOutcome,
} from '../webhooks/dedupe.js';
import { answerColumn, DEFAULT_INBOX_TABLE, dedupeDdlStatements } from './dedupe-ddl.js';
import { dedupeStatements } from './dedupe-sql.js';
import { type Db, driverOf, type Sql } from './driver.js';
import { storeFailure } from './store-failure.js';
import { DEFAULT_SCHEMA, identifier, makeTableIn, qualifiedName, tablesOnce } from './tables.js';

/** Options of {@link postgresDedupeStore}. */
export interface PostgresDedupeStoreOptions {
  /** The schema of the inbox's table, made when missing. Default `'public'`. */
  schema?: string | undefined;
  /** The inbox's table, made when missing (see `postgresDedupeDdl`). Default `'billing_sdk_webhook_inbox'`. */
  table?: string | undefined;
  /**
   * How long a processed id is remembered, in ms: longer than the sender keeps retrying a delivery.
   * Rows older than this (and claims never completed, as long after they expired) are deleted in
   * batches after later events complete, so an id is remembered at least this long. Default 7 days.
   */
  doneTtlMs?: number | undefined;
}

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;
/** At most one prune per this long per store (or per `doneTtlMs`, when shorter). */
const PRUNE_EVERY_MS = 10 * 60 * 1000;

/** Thrown inside an event's transaction to roll it back; never leaves this file. */
class Abandon {
  constructor(readonly outcome: TransactionOutcome) {}
}

/**
 * A {@link DedupeStore} in PostgreSQL, for several instances receiving webhooks, and more: with
 * it, the handlers run `onEvent(event, { transaction })` inside a transaction that also marks the
 * event done, so the event's writes to the application's tables commit with its done mark or not
 * at all. A receiver that dies mid-event rolls both back; its claim expires (`claimTtlMs`) and the
 * retry applies the event, once. Write the effects through `transaction`: a node-postgres client
 * inside `BEGIN` (for a `Pool` or `Client`), or the `tx` of `sql.begin` (for postgres.js); do not
 * commit or roll it back yourself.
 *
 * Each claim step is one SQL statement on the table `schema.table` (made when missing, on first
 * use; `postgresDedupeDdl` gives its SQL for migrations), one row per `transaction_id`, timed by the
 * database's clock. An event's transaction takes a transaction-scoped advisory lock on its id
 * (never waiting), so two receivers never run one event's transaction at once, and claims never
 * wait for an event to finish: a duplicate delivery meanwhile is answered 409.
 *
 * When Postgres is down, every method rejects with a {@link billing-sdk!StoreError} (`'unavailable'`,
 * or `'unexpected_reply'` when the server refuses a statement for good, such as a table of that
 * name with other columns), and the handler answers 500 without running `onEvent`.
 *
 * @param db - A node-postgres `Pool` (recommended: an event's transaction holds one of its clients
 * while `onEvent` runs) or `Client` (statements then wait for the transaction in progress), or a
 * postgres.js `sql`. Not closed here: the application owns it.
 * @throws {@link billing-sdk!InvalidRequestError} when `db` is neither driver, or an option is
 * invalid, naming it.
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createNodeWebhookHandler } from 'billing-sdk';
 * import { postgresDedupeStore } from 'billing-sdk/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const handler = createNodeWebhookHandler({
 *   dedupe: postgresDedupeStore(pool),
 *   onEvent: async (event, { transaction }) => {
 *     const client = transaction as pg.PoolClient;
 *     await client.query('update accounts set active = $1 where ref = $2', [event.is_active, event.account_ref_id]);
 *   },
 * });
 * ```
 */
export function postgresDedupeStore(
  db: unknown,
  options: PostgresDedupeStoreOptions = {},
): Required<DedupeStore> {
  check('postgresDedupeStore', { db }, { db: [required] });
  const driver = driverOf(db, 'postgresDedupeStore', 'db');
  checkOptions('postgresDedupeStore', options, {
    schema: [identifier],
    table: [identifier],
    doneTtlMs: [durationMs],
  });
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const table = options.table ?? DEFAULT_INBOX_TABLE;
  const doneTtlMs = options.doneTtlMs ?? WEEK_MS;
  const sql = dedupeStatements(schema, table);
  const ready = tablesOnce(driver, schema, table, dedupeDdlStatements(schema, table));
  const prune = pruner(driver, sql, doneTtlMs);
  const answers = answerColumnOnce(driver, schema, table, ready);

  /** One statement on `on` (the pool, or an event's transaction), its failure a StoreError. */
  const run = async <T>(
    step: string,
    statement: { text: string; params: unknown[] },
    on: Sql = driver,
    before: () => Promise<void> = ready,
  ) => {
    try {
      await before();
      return await on.query<T>(statement.text, statement.params);
    } catch (error) {
      throw storeFailure(`postgresDedupeStore.${step}`, error);
    }
  };
  return {
    async claim(id, token, ttlMs) {
      const [row] = await run<{ outcome: unknown }>('claim', sql.claim(id, token, ttlMs));
      if (!OUTCOMES.includes(row?.outcome)) {
        throw new StoreError(
          'unexpected_reply',
          `postgresDedupeStore.claim: unexpected row ${String(row?.outcome)}`,
        );
      }
      return row?.outcome as ClaimOutcome;
    },
    async renew(id, token, ttlMs) {
      return (await run('renew', sql.renew(id, token, ttlMs))).length === 1;
    },
    async complete(id, token, answer) {
      const [row] =
        answer === undefined
          ? await run<{ held: unknown }>('complete', sql.done(id, token))
          : await run<{ held: unknown }>('complete', sql.doneWith(id, token, answer), driver, answers);
      prune();
      return row?.held === true;
    },
    async answer(id) {
      const [row] = await run<{ answer: unknown }>('answer', sql.answer(id), driver, answers);
      return typeof row?.answer === 'string' ? row.answer : undefined;
    },
    async release(id, token) {
      await run('release', sql.release(id, token));
    },
    async runInTransaction(id, token, fn) {
      try {
        await ready();
      } catch (error) {
        throw storeFailure('postgresDedupeStore.runInTransaction', error);
      }
      let failed: { error: unknown } | undefined;
      let outcome: TransactionOutcome;
      try {
        outcome = await driver.transaction(async (tx, transaction) => {
          const [entered] = await run<{ locked: unknown; done: unknown }>(
            'runInTransaction',
            sql.enter(id),
            tx,
          );
          if (entered?.done === true) throw new Abandon('done');
          if (entered?.locked !== true) throw new Abandon('processing');
          try {
            await fn(transaction);
          } catch (error) {
            failed = { error };
            throw error;
          }
          const marked = await run('runInTransaction', sql.done(id, token), tx);
          // Another receiver's transaction marked it first: this one's writes must not commit.
          if (marked.length === 0) throw new Abandon('done');
          return 'committed' as const;
        });
      } catch (error) {
        if (error instanceof Abandon) return error.outcome;
        // fn's own error as it is; BEGIN, COMMIT or a borrowed connection failing: the store's.
        if (failed && error === failed.error) throw error;
        throw storeFailure('postgresDedupeStore.runInTransaction', error);
      }
      prune();
      return outcome;
    },
  };
}

/**
 * The table, with its `answer` column (the gate's replay), once per store: a table made before the
 * column had one gets it here, only when an answer is first stored or read (a webhooks' table is
 * never altered), under the SDK's DDL lock; one that has it is left alone, so an application user
 * without the right to alter it needs only the migration (`postgresDedupeDdl`). A failure is
 * tried again on the next call.
 */
function answerColumnOnce(db: Db, schema: string, table: string, ready: () => Promise<void>) {
  let made: Promise<void> | undefined;
  const make = async () => {
    await ready();
    const [row] = await db.query<{ present: unknown }>(
      `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
         JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1::text AND c.relname = $2::text AND a.attname = 'answer'
           AND NOT a.attisdropped) AS present`,
      [schema, table],
    );
    if (row?.present === true) return;
    await db.transaction((tx) => makeTableIn(tx, [answerColumn(qualifiedName(schema, table))]));
  };
  return (): Promise<void> => {
    made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}

/**
 * Deletes rows older than `doneTtlMs`, at most once per {@link PRUNE_EVERY_MS} (or `doneTtlMs`),
 * after an event completed. Never awaited by the event, and its failure only means the rows wait
 * for the next prune.
 */
function pruner(db: Db, sql: ReturnType<typeof dedupeStatements>, doneTtlMs: number): () => void {
  let last = Number.NEGATIVE_INFINITY;
  let running = false;
  return () => {
    const now = Date.now();
    if (running || now - last < Math.min(PRUNE_EVERY_MS, doneTtlMs)) return;
    last = now;
    running = true;
    const { text, params } = sql.prune(doneTtlMs);
    db.query(text, params)
      .catch(() => {
        // The next prune tries again.
      })
      .finally(() => {
        running = false;
      });
  };
}
