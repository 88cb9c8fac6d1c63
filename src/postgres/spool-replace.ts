import type { SpoolError } from '../core/errors/index.js';
import type { SpooledEvent } from '../tracker/spool.js';
import { ackRows, idArray, insertEvents, type SpoolTable } from './spool-sql.js';

/** A member row as the replace finds it, locked. */
interface MemberRow {
  id: string;
  claimed_by: string | null;
  leased: boolean;
}

/**
 * Replaces `members` with `aggregate` in one transaction: the members are locked, checked (each
 * still there, none held by another relay whose lease holds), acknowledged, and the aggregate
 * inserted, so after a crash either the members or the aggregate are left, never both. Rejects with
 * `conflict`'s {@link SpoolError} (nothing written) when a member was acknowledged or is held
 * elsewhere; with the driver's error otherwise. Resolves with the aggregate's id.
 */
export function replaceRows(
  table: SpoolTable,
  members: readonly string[],
  aggregate: SpooledEvent,
  conflict: (member: string, why: 'acknowledged' | 'held elsewhere') => SpoolError,
): Promise<string> {
  return table.db.transaction(async (tx) => {
    const rows = await tx.query<MemberRow>(
      `SELECT id::text AS id, claimed_by, (lease_until IS NOT NULL AND lease_until >= now()) AS leased
       FROM ${table.name} WHERE id = ANY($1::text::bigint[]) AND acked_at IS NULL
       ORDER BY id FOR UPDATE`,
      [idArray(members)],
    );
    const found = new Map(rows.map((row) => [String(row.id), row]));
    for (const id of members) {
      const row = found.get(id);
      if (!row) throw conflict(id, 'acknowledged');
      if (row.leased && row.claimed_by !== table.consumer) throw conflict(id, 'held elsewhere');
    }
    await ackRows(tx, table, members);
    const [id] = await insertEvents(tx, table, [aggregate]);
    return id as string;
  });
}
