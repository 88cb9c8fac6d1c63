import type { SpoolEntry, SpooledEvent } from '../tracker/spool.js';
import { inChunks } from '../tracker/spool-core.js';
import { parseSpooledEvent } from '../tracker/spooled-event.js';
import type { Db, Sql } from './driver.js';

/**
 * What the parts of one `postgresSpool` share: where its rows are, who it is among the relays, and
 * the entries it holds. Statements take ids as one `bigint[]` literal (`{1,2}`) and numbers as text
 * with a cast, so both drivers send them alike, whatever types they infer.
 */
export interface SpoolTable {
  readonly db: Db;
  /** The table, schema-qualified and quoted. */
  readonly name: string;
  /** The channel NOTIFY wakes relays on. */
  readonly channel: string;
  /** This spool's name in `claimed_by`. */
  readonly consumer: string;
  /** How long a claim holds a row, in ms. */
  readonly claimTtlMs: number;
  /** With a retention, acknowledged rows are kept this long (ms); without, deleted at once. */
  readonly retentionMs: number | undefined;
}

/** Ids Postgres can hold in a `bigserial`: others are never sent (the cast would fail the statement). */
const ROW_ID = /^[1-9]\d{0,17}$/;

/** The ids of `ids` that can be rows of a spool's table. */
export const rowIds = (ids: readonly string[]): string[] => ids.filter((id) => ROW_ID.test(id));

/** Whether `id` can be a row of a spool's table. */
export const isRowId = (id: string): boolean => ROW_ID.test(id);

/** `ids` as a Postgres array literal, to be cast `::bigint[]` (every id passed {@link rowIds}). */
export const idArray = (ids: readonly string[]): string => `{${ids.join(',')}}`;

/** Runs `run` on `ids` in chunks (see `inChunks`), each as an array literal; resolves with the rows. */
const chunked = <T>(ids: readonly string[], run: (chunk: string) => Promise<T[]>): Promise<T[]> =>
  inChunks(ids, (chunk) => run(idArray(chunk)));

/**
 * Inserts `events` and notifies the relays, in one statement: on the caller's transaction the
 * notification is delivered at its commit, and never after a rollback. Resolves with the new ids,
 * in the order of `events` (a `bigserial` is drawn in the order the rows are produced).
 */
export async function insertEvents(
  sql: Sql,
  table: SpoolTable,
  events: readonly SpooledEvent[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = await sql.query<{ id: string }>(
    `WITH ins AS (
       INSERT INTO ${table.name} (event)
       SELECT e.value FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS e(value, n) ORDER BY e.n
       RETURNING id)
     SELECT ins.id::text AS id FROM ins, (SELECT pg_notify($2::text, '')) AS n ORDER BY ins.id`,
    [JSON.stringify(events), table.channel],
  );
  if (rows.length !== events.length)
    throw new Error(`inserted ${rows.length} rows for ${events.length} events`);
  return rows.map((row) => String(row.id));
}

/** A row as a claim returns it. */
interface ClaimedRow {
  id: string;
  event: string;
}

/**
 * Claims up to `max` rows no relay holds (never claimed, or their lease expired), the oldest first,
 * for `claimTtlMs`: `FOR UPDATE SKIP LOCKED`, so relays claiming at once each get other rows and
 * never wait for one another. Resolves with the rows in id order and the ids whose event is not one
 * (written by another program).
 */
export async function claimRows(
  table: SpoolTable,
  max: number,
): Promise<{ entries: SpoolEntry[]; unreadable: string[] }> {
  const rows = await table.db.query<ClaimedRow>(
    `WITH picked AS (
       SELECT id FROM ${table.name}
       WHERE acked_at IS NULL AND (lease_until IS NULL OR lease_until < now())
       ORDER BY id LIMIT $1::text::int FOR UPDATE SKIP LOCKED)
     UPDATE ${table.name} AS t
     SET claimed_by = $2::text, lease_until = now() + $3::text::int * interval '1 millisecond'
     FROM picked WHERE t.id = picked.id
     RETURNING t.id::text AS id, t.event::text AS event`,
    [String(max), table.consumer, String(table.claimTtlMs)],
  );
  rows.sort((a, b) => compareIds(String(a.id), String(b.id)));
  const entries: SpoolEntry[] = [];
  const unreadable: string[] = [];
  for (const row of rows) {
    const event = parseSpooledEvent(row.event);
    if (event) entries.push({ id: String(row.id), event });
    else unreadable.push(String(row.id));
  }
  return { entries, unreadable };
}

/** Orders decimal ids as numbers (they may pass 2^53). */
function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** Extends the lease of the rows this spool holds: a live relay keeps them from other relays. */
export async function renewLeases(table: SpoolTable, ids: readonly string[]): Promise<void> {
  await chunked(rowIds(ids), (chunk) =>
    table.db.query(
      `UPDATE ${table.name} SET lease_until = now() + $3::text::int * interval '1 millisecond'
       WHERE id = ANY($1::text::bigint[]) AND claimed_by = $2::text AND acked_at IS NULL`,
      [chunk, table.consumer, String(table.claimTtlMs)],
    ),
  );
}

/**
 * Gives back rows claimed under this spool's name and not acknowledged, so any relay claims them
 * at once: those in `ids`, or (`ids` undefined) all of them (a restarted instance with a stable
 * consumer name, whose previous run held them).
 */
export async function releaseLeases(table: SpoolTable, ids?: readonly string[]): Promise<void> {
  const release = `UPDATE ${table.name} SET claimed_by = NULL, lease_until = NULL
     WHERE claimed_by = $1::text AND acked_at IS NULL`;
  if (ids === undefined) await table.db.query(release, [table.consumer]);
  else
    await chunked(rowIds(ids), (chunk) =>
      table.db.query(`${release} AND id = ANY($2::text::bigint[])`, [table.consumer, chunk]),
    );
}

/** Acknowledges rows: deleted, or marked with the time when acknowledged rows are kept for a while. */
export async function ackRows(sql: Sql, table: SpoolTable, ids: readonly string[]): Promise<void> {
  await chunked(rowIds(ids), (chunk) =>
    sql.query(
      table.retentionMs === undefined
        ? `DELETE FROM ${table.name} WHERE id = ANY($1::text::bigint[])`
        : `UPDATE ${table.name} SET acked_at = now(), claimed_by = NULL, lease_until = NULL
           WHERE id = ANY($1::text::bigint[]) AND acked_at IS NULL`,
      [chunk],
    ),
  );
}

/** The ids of `ids` not acknowledged yet, in the order given. */
export async function pendingIds(table: SpoolTable, ids: readonly string[]): Promise<string[]> {
  const rows = await chunked(rowIds(ids), (chunk) =>
    table.db.query<{ id: string }>(
      `SELECT id::text AS id FROM ${table.name} WHERE id = ANY($1::text::bigint[]) AND acked_at IS NULL`,
      [chunk],
    ),
  );
  const found = new Set(rows.map((row) => String(row.id)));
  return ids.filter((id) => found.has(id));
}

/** Rows a claim would hand now: not acknowledged, and held by no relay. */
export async function claimableCount(table: SpoolTable): Promise<number> {
  const [row] = await table.db.query<{ n: string | number }>(
    `SELECT count(*)::text AS n FROM ${table.name}
     WHERE acked_at IS NULL AND (lease_until IS NULL OR lease_until < now())`,
  );
  return Number(row?.n ?? 0);
}

/** Deletes up to 10 000 rows acknowledged longer ago than the retention; resolves with how many. */
export async function deleteExpired(table: SpoolTable): Promise<number> {
  if (table.retentionMs === undefined) return 0;
  const rows = await table.db.query(
    `DELETE FROM ${table.name} WHERE id IN (
       SELECT id FROM ${table.name}
       WHERE acked_at IS NOT NULL AND acked_at < now() - $1::text::bigint * interval '1 millisecond'
       LIMIT 10000)
     RETURNING id`,
    [String(table.retentionMs)],
  );
  return rows.length;
}
