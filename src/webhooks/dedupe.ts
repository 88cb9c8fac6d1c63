/**
 * What {@link DedupeStore.claim} answers: `'claimed'` (the caller holds the claim and processes the
 * delivery), `'processing'` (another holder's claim is live: the event is being processed, not yet
 * done), or `'done'` (processed before).
 */
export type ClaimOutcome = 'claimed' | 'processing' | 'done';

/**
 * Every {@link ClaimOutcome}: what a store's answer to `claim` is checked against before it is
 * trusted (by the handlers, and by the Redis and PostgreSQL stores of what their script or query gave).
 */
export const CLAIM_OUTCOMES: readonly unknown[] = ['claimed', 'processing', 'done'] satisfies ClaimOutcome[];

/**
 * Where webhook deliveries are claimed and remembered, by `transaction_id`, so an event is
 * processed once even when its retries reach several processes at once. Every method must be atomic
 * in the store (one Redis command or script, one SQL statement), and may be async.
 *
 * Each claim carries a `token`, unique per attempt, so an instance whose claim expired (a stalled
 * process) cannot release or renew the claim another instance holds now. A method that throws or
 * rejects makes the handler answer 500 without running `onEvent`: never process without a claim.
 *
 * This contract replaces `has`/`add`, whose check-then-act let two instances (or a retry reaching
 * another instance) run the same event twice.
 */
export interface DedupeStore {
  /**
   * Claims `id` for `token` unless it is done or claimed by another live token. A claim lasts
   * `ttlMs` unless renewed, so a crashed holder blocks the id for at most that long. Claiming again
   * with the token that holds the claim answers `'claimed'`.
   */
  claim(id: string, token: string, ttlMs: number): ClaimOutcome | Promise<ClaimOutcome>;
  /**
   * Extends the claim `token` holds to `ttlMs` from now; called while a long `onEvent` runs.
   * Answers false when `token` no longer holds it (it expired and was perhaps claimed again).
   */
  renew(id: string, token: string, ttlMs: number): boolean | Promise<boolean>;
  /**
   * Remembers `id` as done; called after `onEvent` resolved. Records it even when `token` lost the
   * claim meanwhile, since the event was processed all the same; answers whether `token` still held
   * it (false: the claim expired during `onEvent`, so another instance may have run it too).
   *
   * `answer` (given only by the gate, with its `idempotency.replay` option, and only to a store
   * with {@link DedupeStore.answer}): text to keep with the done mark, as long as the mark, read
   * back by `answer(id)`. A store written before it ignores it: the gate then replays nothing.
   */
  complete(id: string, token: string, answer?: string): boolean | Promise<boolean>;
  /**
   * Optional: the `answer` a `complete` kept with `id`'s done mark, or `undefined` when the id is
   * not done or none was kept. Offered by `memoryDedupeStore`, `redisDedupeStore` and
   * `postgresDedupeStore`; the gate's `idempotency.replay` needs it (without it, a used key is
   * refused `422`, never replayed).
   */
  answer?(id: string): string | undefined | Promise<string | undefined>;
  /**
   * Drops the claim if `token` still holds it, so the sender's next delivery can claim it at once;
   * called after `onEvent` failed. A claim held by another token, or a done id, is left as it is.
   */
  release(id: string, token: string): void | Promise<void>;
  /**
   * Optional: offered by a store that keeps its ids in the application's own database
   * (`postgresDedupeStore` from `billing-sdk/postgres`), so an event's writes and its done mark
   * commit together. Called by the handlers in place of {@link DedupeStore.complete}, while `token`
   * holds the claim on `id`: opens a transaction on the store's database, runs `fn` with it (the
   * driver's own transaction object, which `onEvent` gets as `transaction`), then marks `id` done
   * in that transaction only if no other transaction did, and commits. A receiver that dies
   * mid-event leaves nothing: its transaction rolls back, its claim expires, the retry runs the event.
   *
   * Resolves with:
   * - `'committed'`: `fn` resolved, and its writes committed with the done mark;
   * - `'done'`: another receiver's transaction marked `id` done first: `fn` did not run, or its
   *   writes were rolled back (nothing committed);
   * - `'processing'`: another receiver's transaction for `id` is still open (its claim expired
   *   while it ran): `fn` did not run; the caller releases its claim, and the sender retries.
   *
   * Rejects, after rolling back, with `fn`'s own error when `fn` throws, or with the store's error
   * when the database fails (then the outcome of a lost `COMMIT` is unknown, and the done mark
   * tells: a retry claims the id again only if nothing committed).
   */
  runInTransaction?(
    id: string,
    token: string,
    fn: (transaction: unknown) => Promise<void>,
  ): Promise<TransactionOutcome>;
}

/** What {@link DedupeStore.runInTransaction} answers; see there. */
export type TransactionOutcome = 'committed' | 'done' | 'processing';

/**
 * The second argument of a webhook handler's `onEvent`: always an object, so
 * `async (event, { transaction }) => …` works with every store. `transaction` is set only when
 * the dedupe store runs events in transactions ({@link DedupeStore.runInTransaction}).
 */
export interface WebhookEventContext {
  /**
   * With `postgresDedupeStore` (`billing-sdk/postgres`), the open transaction in which the event
   * is also marked done: a node-postgres client inside `BEGIN` (when the store was given a `Pool`
   * or `Client`), or the `tx` of postgres.js's `sql.begin` (when given a postgres.js `sql`). Write
   * the event's effects through it, never through another connection, and neither commit nor roll
   * it back: resolving `onEvent` commits, throwing rolls back. `undefined` with other stores.
   */
  transaction?: unknown;
}
