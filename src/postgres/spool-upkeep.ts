import { unref } from '../util/timers.js';
import { deleteExpired, renewLeases, type SpoolTable } from './spool-sql.js';

/** How often acknowledged rows past their retention are deleted, at most, in ms. */
const CLEANUP_EVERY_MS = 60_000;

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
