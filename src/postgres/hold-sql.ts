import type { HoldLedger } from '../credits/store.js';
import { holdTables } from './hold-ddl.js';
import { qualifiedName } from './tables.js';

/** A duration in ms as the statements take it: a whole number of ms, at least 1. */
const ms = (value: number): number => Math.max(1, Math.ceil(value));

/** `$param` ms as an interval. */
const interval = (param: string): string => `${param}::float8 * interval '1 millisecond'`;

/** The ledger's key, always the first three parameters. */
const KEY = 'account = $1::text AND product = $2::text AND meter = $3::text';
const key = (l: HoldLedger): unknown[] => [l.account, l.product, l.meter];

/**
 * A fence as `epoch:debited` parameters; anything else (not one this store gave) matches no ledger,
 * so its balance is kept only as a lower bound and stays stale, as memoryHoldStore does.
 */
function fenceParams(fence: string): [string, string] {
  const match = /^(\d{1,18}):(\d{1,18})$/.exec(fence);
  return match ? [match[1]!, match[2]!] : ['-1', '-1'];
}

/**
 * The store's statements on its two tables, with their parameters. Time is the database's
 * (`clock_timestamp()`, the time of the statement rather than of its transaction), so instances
 * with skewed clocks agree on when a hold expires and when a balance grows stale.
 */
export function holdStatements(schema: string, table: string) {
  const names = holdTables(table);
  const L = qualifiedName(schema, names.ledgers);
  const H = qualifiedName(schema, names.holds);
  return {
    /**
     * The first statement of a reservation's transaction: locks the ledger's row until the
     * transaction ends, inserting it when missing. `DO UPDATE … WHERE false` updates nothing but
     * still locks the row it conflicted with (and waits for a concurrent inserter), so
     * reservations of one ledger take turns, each after the previous one committed.
     */
    lock: (l: HoldLedger) => ({
      text: `INSERT INTO ${L} AS l (account, product, meter) VALUES ($1::text, $2::text, $3::text)
ON CONFLICT (account, product, meter) DO UPDATE SET epoch = l.epoch WHERE false`,
      params: key(l),
    }),
    /**
     * The second statement of a reservation, under the ledger's lock. A statement of its own: in
     * READ COMMITTED each statement reads a new snapshot, so this one sees every hold the previous
     * lock holders committed (one statement that locked and summed would read the snapshot from
     * before its lock wait, and miss them). Drops the ledger's expired holds, then records the hold
     * when the balance is fresh and covers it, all at one instant (`clock`). The sum leaves out the
     * expired holds itself: the DELETE's effect is not visible to the other parts of the statement.
     * A resend (the hold `id` already there, unexpired: its first answer was lost) is granted again
     * and counted once, as in every store.
     */
    reserve: (l: HoldLedger, id: string, quantity: number, ttlMs: number, balanceTtlMs: number) => ({
      text: `WITH clock AS (SELECT clock_timestamp() AS at),
ledger AS (
  SELECT l.balance, l.epoch, l.debited,
    (l.balance IS NULL OR l.read_at IS NULL OR l.read_at + ${interval('$4')} <= c.at) AS stale
  FROM ${L} l, clock c WHERE ${KEY}
),
expired AS (
  DELETE FROM ${H} h USING clock c WHERE ${KEY} AND h.expires_at <= c.at RETURNING 1
),
held AS (
  SELECT coalesce(sum(h.quantity), 0) AS held,
    coalesce(bool_or(h.id = $5::text), false) AS mine
  FROM ${H} h, clock c WHERE ${KEY} AND h.expires_at > c.at
),
granted AS (
  INSERT INTO ${H} AS h (account, product, meter, id, quantity, expires_at)
  SELECT $1::text, $2::text, $3::text, $5::text, $6::bigint, c.at + ${interval('$7')}
  FROM ledger, held, clock c
  WHERE NOT held.mine AND NOT ledger.stale AND ledger.balance - held.held >= $6::bigint
  ON CONFLICT (account, product, meter, id)
  DO UPDATE SET quantity = excluded.quantity, expires_at = excluded.expires_at
  RETURNING 1
)
SELECT ledger.stale AND NOT held.mine AS stale, ledger.epoch::text || ':' || ledger.debited::text AS fence,
  (coalesce(ledger.balance, 0) - held.held)::float8 AS available,
  held.mine,
  EXISTS (SELECT 1 FROM granted) AS granted,
  (SELECT count(*) FROM expired)::int AS expired
FROM ledger, held`,
      params: [...key(l), ms(balanceTtlMs), id, quantity, ms(ttlMs)],
    }),
    /**
     * Records a balance read after a reservation answered `stale` with `fence`: when only settles
     * came between (same epoch), the read less what they debited since the fence (it may predate
     * them), fresh: never the balance known before, which may predate a top-up. After an
     * invalidation the lower of the two is kept, stale. A missing row has the fence `0:0`.
     */
    setBalance: (l: HoldLedger, balance: number, fence: string) => ({
      text: `INSERT INTO ${L} AS l (account, product, meter, balance, read_at)
VALUES ($1::text, $2::text, $3::text, $4::bigint,
  CASE WHEN $5::bigint = 0 AND $6::bigint = 0 THEN clock_timestamp() END)
ON CONFLICT (account, product, meter) DO UPDATE SET
  balance = CASE
    WHEN l.epoch = $5::bigint AND l.debited >= $6::bigint THEN $4::bigint - (l.debited - $6::bigint)
    WHEN l.balance IS NULL THEN $4::bigint
    ELSE least(l.balance, $4::bigint) END,
  read_at = CASE WHEN l.epoch = $5::bigint AND l.debited >= $6::bigint THEN clock_timestamp() ELSE l.read_at END`,
      params: [...key(l), balance, ...fenceParams(fence)],
    }),
    /**
     * The first statement of a settle's transaction: adds what the debit took to the ledger's
     * `debited` (a balance read in flight is then lowered by it) and lowers its balance to
     * `remaining`. It takes
     * the ledger's lock before the hold's row is touched, the order a reservation takes them in,
     * so the two never wait on each other in a circle.
     */
    settled: (l: HoldLedger, remaining: number, debited: number) => ({
      text: `INSERT INTO ${L} AS l (account, product, meter, debited) VALUES ($1::text, $2::text, $3::text, $5::bigint)
ON CONFLICT (account, product, meter) DO UPDATE SET
  debited = l.debited + $5::bigint,
  balance = CASE WHEN l.balance IS NULL THEN NULL ELSE least(l.balance, $4::bigint) END
RETURNING balance::float8 AS balance`,
      params: [...key(l), remaining, debited],
    }),
    /** Drops the hold `id`; `live` when it was there and unexpired. */
    drop: (l: HoldLedger, id: string) => ({
      text: `DELETE FROM ${H} WHERE ${KEY} AND id = $4::text RETURNING expires_at > clock_timestamp() AS live`,
      params: [...key(l), id],
    }),
    /**
     * The second statement of an extend's transaction, after {@link lock} (so a reservation summing
     * the holds never reads the hold's old expiry while it is moved): makes the unexpired hold `id`
     * count until at least `ttlMs` from now; a row when it was there unexpired.
     */
    extend: (l: HoldLedger, id: string, ttlMs: number) => ({
      text: `UPDATE ${H} SET expires_at = greatest(expires_at, clock_timestamp() + ${interval('$5')})
WHERE ${KEY} AND id = $4::text AND expires_at > clock_timestamp() RETURNING 1 AS extended`,
      params: [...key(l), id, ms(ttlMs)],
    }),
    /**
     * Drops the hold `id` and reads the ledger's balance, in one statement. It locks only the
     * hold's row (never the ledger's), so it never waits on a reservation in a circle.
     */
    release: (l: HoldLedger, id: string) => ({
      text: `WITH gone AS (
  DELETE FROM ${H} WHERE ${KEY} AND id = $4::text RETURNING expires_at > clock_timestamp() AS live
)
SELECT coalesce((SELECT bool_or(live) FROM gone), false) AS held,
  (SELECT balance::float8 FROM ${L} WHERE ${KEY}) AS balance`,
      params: [...key(l), id],
    }),
    /**
     * Makes every balance of the account stale, and moves its epoch: a read in flight is not taken
     * as fresh. The rows are locked in the order of their key, so two invalidations of one account
     * never wait on each other in a circle.
     */
    invalidate: (account: string) => ({
      text: `UPDATE ${L} l SET epoch = l.epoch + 1, read_at = NULL FROM (
  SELECT product, meter FROM ${L} WHERE account = $1::text ORDER BY product, meter FOR UPDATE
) k WHERE l.account = $1::text AND l.product = k.product AND l.meter = k.meter`,
      params: [account],
    }),
  };
}

/** The statements of one store (see {@link holdStatements}). */
export type HoldStatements = ReturnType<typeof holdStatements>;
