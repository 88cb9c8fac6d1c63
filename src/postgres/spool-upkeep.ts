import { unref } from '../util/timers.js';
import { qualifiedName, spoolDdlStatements } from './ddl.js';
import type { Db } from './driver.js';
import { deleteExpired, renewLeases, type SpoolTable } from './spool-sql.js';

/** How often acknowledged rows past their retention are deleted, at most, in ms. */
const CLEANUP_EVERY_MS = 60_000;

/**
 * Makes the table when it is missing. Several instances starting at once would race on `CREATE …
 * IF NOT EXISTS` (it is not atomic against a concurrent create), so they take turns on an advisory
 * lock; a table that exists is left alone, so a migrated database needs no right to create.
 */
export async function createTable(db: Db, schema: string, table: string): Promise<void> {
  const name = qualifiedName(schema, table);
  const [found] = await db.query<{ present: boolean }>(
    'SELECT to_regclass($1::text) IS NOT NULL AS present',
    [name],
  );
  if (found?.present) return;
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1::text))', [`billing-sdk:${name}`]);
    for (const statement of spoolDdlStatements(schema, table)) await tx.query(statement);
  });
}

/**
 * Every third of the claim time, renews the leases of the rows this spool holds (so no other relay
 * claims them while it sends them), and now and then deletes acknowledged rows past their
 * retention. Best effort: if Postgres is unreachable no other relay can claim either, and a row
 * claimed anyway is sent under its key. Returns the function that stops it; its timer never keeps
 * the process alive.
 */
export function startHeartbeat(table: SpoolTable): () => void {
  let beating = false;
  let lastCleanup = Date.now();
  const cleanupEvery = Math.max(1_000, Math.min(table.retentionMs ?? CLEANUP_EVERY_MS, CLEANUP_EVERY_MS));
  const beat = async (): Promise<void> => {
    if (beating) return;
    beating = true;
    try {
      if (table.held.size) await renewLeases(table, [...table.held]);
      if (table.retentionMs !== undefined && Date.now() - lastCleanup >= cleanupEvery) {
        lastCleanup = Date.now();
        while ((await deleteExpired(table)) === 10_000) {}
      }
    } catch {
      // Tried again on the next beat.
    } finally {
      beating = false;
    }
  };
  const timer = unref(setInterval(() => void beat(), Math.max(10, Math.floor(table.claimTtlMs / 3))));
  return () => clearInterval(timer);
}
