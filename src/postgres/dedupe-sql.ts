import { qualifiedName } from './tables.js';

/** A claim's TTL in ms as the statements take it: a whole number of ms, at least 1. */
const ms = (value: number): number => Math.max(1, Math.ceil(value));

/**
 * The store's statements on one table, each a single atomic statement with its parameters. Time is
 * the database's (`now()`), so receivers with skewed clocks agree on when a claim expires.
 */
export function dedupeStatements(schema: string, table: string) {
  const t = qualifiedName(schema, table);
  const until = (param: string) => `now() + ${param}::float8 * interval '1 millisecond'`;
  return {
    /**
     * Inserts or takes over the claim when the id is not done and its claim expired or is the
     * token's own; the row lock of `ON CONFLICT` makes concurrent claims take turns. The outer
     * select reads the snapshot from before, so a claim lost to a concurrent one answers
     * `processing`, and one lost to a concurrent done mark too (its retry then reads `done`).
     */
    claim: (id: string, token: string, ttlMs: number) => ({
      text: `WITH taken AS (
  INSERT INTO ${t} AS i (id, token, expires_at) VALUES ($1::text, $2::text, ${until('$3')})
  ON CONFLICT (id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at
  WHERE i.done_at IS NULL AND (i.expires_at <= now() OR i.token = excluded.token)
  RETURNING 1
)
SELECT CASE
  WHEN EXISTS (SELECT 1 FROM taken) THEN 'claimed'
  WHEN EXISTS (SELECT 1 FROM ${t} WHERE id = $1::text AND done_at IS NOT NULL) THEN 'done'
  ELSE 'processing' END AS outcome`,
      params: [id, token, ms(ttlMs)],
    }),
    renew: (id: string, token: string, ttlMs: number) => ({
      text: `UPDATE ${t} SET expires_at = ${until('$3')}
WHERE id = $1::text AND token = $2::text AND done_at IS NULL AND expires_at > now() RETURNING 1`,
      params: [id, token, ms(ttlMs)],
    }),
    /**
     * Marks the id done whoever holds it (the event was processed all the same); answers a row with
     * `held` only when it was not done before, `held` telling whether `token` still held the claim.
     * The same statement marks it in a transaction, where no row means "done elsewhere".
     */
    done: (id: string, token: string) => ({
      text: `INSERT INTO ${t} AS i (id, done_at) VALUES ($1::text, now())
ON CONFLICT (id) DO UPDATE SET done_at = now() WHERE i.done_at IS NULL
RETURNING (token IS NOT DISTINCT FROM $2::text AND expires_at > now()) AS held`,
      params: [id, token],
    }),
    /** {@link done}, keeping the gate's answer with the mark (its `idempotency.replay`). */
    doneWith: (id: string, token: string, answer: string) => ({
      text: `INSERT INTO ${t} AS i (id, done_at, answer) VALUES ($1::text, now(), $3::text)
ON CONFLICT (id) DO UPDATE SET done_at = now(), answer = excluded.answer WHERE i.done_at IS NULL
RETURNING (token IS NOT DISTINCT FROM $2::text AND expires_at > now()) AS held`,
      params: [id, token, answer],
    }),
    /** The answer kept with a done id's mark, if any. */
    answer: (id: string) => ({
      text: `SELECT answer FROM ${t} WHERE id = $1::text AND done_at IS NOT NULL`,
      params: [id],
    }),
    release: (id: string, token: string) => ({
      text: `DELETE FROM ${t} WHERE id = $1::text AND token = $2::text AND done_at IS NULL`,
      params: [id, token],
    }),
    /**
     * Taken at the start of an event's transaction: the id's lock for the transaction (never
     * waiting: another receiver's open transaction answers `locked` false), and whether the id is
     * done already. The lock is an advisory one, keyed by table and id, so claims and renewals,
     * which touch the row, never wait for an event's transaction.
     */
    enter: (id: string) => ({
      text: `SELECT pg_try_advisory_xact_lock(hashtext($1::text), hashtext($2::text)) AS locked,
  EXISTS (SELECT 1 FROM ${t} WHERE id = $2::text AND done_at IS NOT NULL) AS done`,
      params: [`billing-sdk:${schema}.${table}`, id],
    }),
    /**
     * Deletes up to 1 000 done rows, and claims never completed, older than `$1` ms. The age is
     * checked again on the row deleted, so a claim taken over meanwhile stays.
     */
    prune: (olderThanMs: number) => {
      const old = `coalesce(done_at, expires_at) < now() - $1::float8 * interval '1 millisecond'`;
      return {
        text: `DELETE FROM ${t} WHERE id IN (SELECT id FROM ${t} WHERE ${old} LIMIT 1000) AND ${old}`,
        params: [ms(olderThanMs)],
      };
    },
  };
}
