/**
 * What {@link DedupeStore.claim} answers: `'claimed'` (the caller holds the claim and processes the
 * delivery), `'processing'` (another holder's claim is live: the event is being processed, not yet
 * done), or `'done'` (processed before).
 */
export type ClaimOutcome = 'claimed' | 'processing' | 'done';

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
   */
  complete(id: string, token: string): boolean | Promise<boolean>;
  /**
   * Drops the claim if `token` still holds it, so the sender's next delivery can claim it at once;
   * called after `onEvent` failed. A claim held by another token, or a done id, is left as it is.
   */
  release(id: string, token: string): void | Promise<void>;
}
