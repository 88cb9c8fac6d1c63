import type { DeadLetter, DeadLetterCause, DeadLetterEntry } from '../tracker/spool.js';
import type { DeadLetterStorage } from '../tracker/spool-core.js';
import { parseSpooledEvent } from '../tracker/spooled-event.js';
import { idArray, isRowId, type SpoolTable } from './spool-sql.js';

/** A letter's row as the list reads it. */
interface LetterRow {
  id: string;
  event: string;
  reason: string;
  attempts: number | string;
  first_attempt_at: string;
  dead_lettered_at: string;
}

/**
 * The storage statements of a `postgresSpool`'s dead letters, in the table `letters` beside the
 * spool's (schema-qualified, quoted). Each step is one statement, so atomic: a move deletes the
 * spool's rows (or marks them acknowledged, with a retention) and inserts the letters; a replay
 * deletes letters and inserts their events as new rows, notifying the relays.
 */
export function deadLetterStorage(table: SpoolTable, letters: string): DeadLetterStorage {
  const chosen = (ids: readonly string[] | 'all', n: number): string =>
    ids === 'all' ? 'true' : `id = ANY($${n}::text::bigint[])`;
  const idParams = (ids: readonly string[] | 'all'): string[] => (ids === 'all' ? [] : [idArray(ids)]);
  return {
    isEntryId: isRowId,
    isLetterId: isRowId,

    async move(entries: readonly DeadLetterEntry[]) {
      const given = entries.map(({ id, reason, attempts, firstAttemptAt, deadLetteredAt }) => ({
        id,
        reason,
        attempts,
        first_attempt_at: firstAttemptAt,
        dead_lettered_at: deadLetteredAt,
      }));
      const gone =
        table.retentionMs === undefined
          ? `DELETE FROM ${table.name} WHERE id = ANY($1::text::bigint[]) AND acked_at IS NULL RETURNING id, event`
          : `UPDATE ${table.name} SET acked_at = now(), claimed_by = NULL, lease_until = NULL
             WHERE id = ANY($1::text::bigint[]) AND acked_at IS NULL RETURNING id, event`;
      await table.db.query(
        `WITH gone AS (${gone}),
         given AS (SELECT * FROM jsonb_to_recordset($2::text::jsonb)
           AS g(id text, reason jsonb, attempts integer, first_attempt_at timestamptz, dead_lettered_at timestamptz))
         INSERT INTO ${letters} (event, reason, attempts, first_attempt_at, dead_lettered_at)
         SELECT gone.event, given.reason, given.attempts, given.first_attempt_at, given.dead_lettered_at
         FROM gone JOIN given ON given.id = gone.id::text ORDER BY gone.id`,
        [idArray(entries.map((entry) => entry.id)), JSON.stringify(given)],
      );
    },

    async list(max) {
      const rows = await table.db.query<LetterRow>(
        `SELECT id::text AS id, event::text AS event, reason::text AS reason, attempts,
           to_char(first_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS first_attempt_at,
           to_char(dead_lettered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS dead_lettered_at
         FROM ${letters} ORDER BY id LIMIT $1::text::bigint`,
        [max === undefined ? null : String(max)],
      );
      const out: DeadLetter[] = [];
      for (const row of rows) {
        const event = parseSpooledEvent(row.event);
        if (!event) continue;
        out.push({
          id: String(row.id),
          event,
          reason: JSON.parse(row.reason) as DeadLetterCause,
          attempts: Number(row.attempts),
          firstAttemptAt: row.first_attempt_at,
          deadLetteredAt: row.dead_lettered_at,
        });
      }
      return out;
    },

    async replay(ids) {
      const rows = await table.db.query<{ id: string }>(
        `WITH gone AS (DELETE FROM ${letters} WHERE ${chosen(ids, 2)} RETURNING id, event),
         back AS (INSERT INTO ${table.name} (event) SELECT event FROM gone ORDER BY id RETURNING id)
         SELECT gone.id::text AS id FROM gone, (SELECT pg_notify($1::text, '')) AS n ORDER BY gone.id`,
        [table.channel, ...idParams(ids)],
      );
      return rows.map((row) => String(row.id));
    },

    async drop(ids) {
      const rows = await table.db.query<{ id: string }>(
        `DELETE FROM ${letters} WHERE ${chosen(ids, 1)} RETURNING id::text AS id`,
        idParams(ids),
      );
      return rows.map((row) => String(row.id)).sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
    },
  };
}
