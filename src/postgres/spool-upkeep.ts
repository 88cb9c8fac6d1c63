import { deleteExpired, renewLeases, type SpoolTable } from './spool-sql.js';

/** How often acknowledged rows past their retention are deleted, at most, in ms. */
const CLEANUP_EVERY_MS = 60_000;

/**
 * The heartbeat's beat of a `postgresSpool` (run by its `Handout` every third of the claim time):
 * renews the leases of the rows it holds, and now and then deletes acknowledged rows past their
 * retention. Rejects with the driver's error (the next beat tries again).
 */
export function upkeep(table: SpoolTable): (held: string[]) => Promise<void> {
  let lastCleanup = Date.now();
  const cleanupEvery = Math.max(1_000, Math.min(table.retentionMs ?? CLEANUP_EVERY_MS, CLEANUP_EVERY_MS));
  return async (held) => {
    await renewLeases(table, held);
    if (table.retentionMs === undefined || Date.now() - lastCleanup < cleanupEvery) return;
    lastCleanup = Date.now();
    while ((await deleteExpired(table)) === 10_000) {}
  };
}
