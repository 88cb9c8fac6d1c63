import type { Db, Sql } from './driver-shapes.js';
import { withDeadline } from './statement-deadline.js';

/**
 * `db` with every statement bounded by `timeoutMs` (cancelled past it, where the driver can), and
 * every transaction as a whole by the same bound: a statement stuck behind a lock (a migration's
 * `LOCK TABLE`) or on a dead connection fails with a transient `StatementTimeout` instead of holding
 * its caller (a spool's take, and the tracker's `close()` waiting for it) for ever. LISTEN is not a
 * statement: it is kept as it is.
 */
export function boundedDb(db: Db, timeoutMs: number): Db {
  const bounded = (sql: Sql): Sql => ({
    query: (text, params) => sql.query(text, params, timeoutMs),
  });
  return {
    kind: db.kind,
    query: (text, params) => db.query(text, params, timeoutMs),
    // A node-postgres ROLLBACK waits behind a statement it timed out: the whole is bounded too.
    transaction: (fn) =>
      withDeadline(
        db.transaction((tx, native) => fn(bounded(tx), native)),
        timeoutMs,
      ),
    listen: (channel, onNotify, onLost) => db.listen(channel, onNotify, onLost),
  };
}
