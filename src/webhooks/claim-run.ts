import type { WebhookEvent } from '../schemas/webhook.js';
import { realClock } from '../util/clock.js';
import { Stop } from '../util/stop.js';
import { randomUUID } from '../util/uuid.js';
import {
  CLAIM_OUTCOMES,
  type DedupeStore,
  type TransactionOutcome,
  type WebhookEventContext,
} from './dedupe.js';

/** Default claim TTL: how long a crashed receiver can hold up the retries of its event. */
export const DEFAULT_CLAIM_TTL_MS = 60_000;

/** What became of one delivery under a claim; the handler turns it into a reply. */
export type ClaimedRun =
  | { kind: 'done' }
  | { kind: 'processing' }
  | { kind: 'processed' }
  | { kind: 'failed'; stage: 'store' | 'event'; error: unknown };

/** What {@link runClaimed} needs: the store, the claim TTL, the user's callback and a reporter. */
export interface ClaimRunOptions {
  dedupe: DedupeStore;
  ttlMs: number;
  onEvent: (event: WebhookEvent, context: WebhookEventContext) => unknown;
  /** Told about failures that do not change the answer (a lost or unrenewable claim, a failed release). */
  report: (error: unknown) => void;
}

const TRANSACTION_OUTCOMES: readonly unknown[] = [
  'committed',
  'done',
  'processing',
] satisfies TransactionOutcome[];

/**
 * Claims the event's id, runs `onEvent` only under that claim (renewed while it runs), then marks
 * the id done, or releases it when `onEvent` failed so the sender's retry can claim it at once.
 * A store that fails before the claim is held means no `onEvent`: fail closed. With a store that
 * has {@link DedupeStore.runInTransaction}, `onEvent` gets `{ transaction }` and runs inside it, in
 * place of the separate done mark; with any other, it gets `{}`. Never rejects.
 */
export async function runClaimed(event: WebhookEvent, options: ClaimRunOptions): Promise<ClaimedRun> {
  const { dedupe, ttlMs, report } = options;
  const id = event.transaction_id;
  const token = randomUUID();
  let outcome: unknown;
  try {
    outcome = await dedupe.claim(id, token, ttlMs);
  } catch (error) {
    return { kind: 'failed', stage: 'store', error };
  }
  if (!CLAIM_OUTCOMES.includes(outcome)) {
    return {
      kind: 'failed',
      stage: 'store',
      error: new TypeError(`dedupe.claim answered ${String(outcome)}`),
    };
  }
  if (outcome === 'done') return { kind: 'done' };
  if (outcome === 'processing') return { kind: 'processing' };
  const stop = keepClaimed(dedupe, id, token, ttlMs, report);
  if (dedupe.runInTransaction) return runInTransaction(event, token, stop, options);
  try {
    await options.onEvent(event, {});
  } catch (error) {
    stop();
    await releaseOrReport(dedupe, id, token, report);
    return { kind: 'failed', stage: 'event', error };
  }
  stop();
  try {
    // Not released when this fails: the event was processed, and a retry within the TTL then gets
    // 'processing' rather than running it again at once. After the TTL it runs again (at least once).
    if ((await dedupe.complete(id, token)) === false) report(lostClaim(id, ttlMs));
  } catch (error) {
    return { kind: 'failed', stage: 'store', error };
  }
  return { kind: 'processed' };
}

/**
 * The claimed run with a store that takes part in the app's transactions: `onEvent` runs inside
 * the store's transaction, which also marks the id done, so both commit or neither does. Any
 * failure releases the claim: the done mark, if it committed after all, is never undone by that.
 */
async function runInTransaction(
  event: WebhookEvent,
  token: string,
  stop: () => void,
  options: ClaimRunOptions,
): Promise<ClaimedRun> {
  const { dedupe, report } = options;
  const id = event.transaction_id;
  let failed: { error: unknown } | undefined;
  let outcome: unknown;
  try {
    outcome = await dedupe.runInTransaction?.(id, token, async (transaction) => {
      try {
        await options.onEvent(event, { transaction });
      } catch (error) {
        failed = { error };
        throw error;
      } finally {
        // Before the done mark: a renewal racing the commit would read as a lost claim.
        stop();
      }
    });
  } catch (error) {
    stop();
    await releaseOrReport(dedupe, id, token, report);
    return failed
      ? { kind: 'failed', stage: 'event', error: failed.error }
      : { kind: 'failed', stage: 'store', error };
  }
  stop();
  if (!TRANSACTION_OUTCOMES.includes(outcome)) {
    await releaseOrReport(dedupe, id, token, report);
    return {
      kind: 'failed',
      stage: 'store',
      error: new TypeError(`dedupe.runInTransaction answered ${String(outcome)}`),
    };
  }
  if (outcome === 'committed') return { kind: 'processed' };
  if (outcome === 'done') return { kind: 'done' };
  // Another receiver's transaction is still open: free the id for the retry that follows it.
  await releaseOrReport(dedupe, id, token, report);
  return { kind: 'processing' };
}

async function releaseOrReport(
  dedupe: DedupeStore,
  id: string,
  token: string,
  report: (error: unknown) => void,
): Promise<void> {
  try {
    await dedupe.release(id, token);
  } catch (releaseError) {
    // The claim then expires after its TTL instead: the retry meets 'processing' until then.
    report(releaseError);
  }
}

function lostClaim(id: string, ttlMs: number): Error {
  return new Error(
    `the claim on webhook ${id} expired before onEvent finished (claimTtlMs ${ttlMs}), so another ` +
      'receiver may have processed it too: was this process stalled, or the dedupe store unreachable?',
  );
}

/** Why a claim's renewal ended: its run is over. Never seen by anyone (the renewal loop swallows it). */
const RENEWAL_STOPPED = new Error('renewal stopped');
const renewalStopped = () => RENEWAL_STOPPED;

/**
 * Renews the claim every third of its TTL while `onEvent` runs, so a long `onEvent` keeps it and a
 * short TTL still frees the id soon after a crash. Waits through the SDK's one sleep, which waits
 * any length in chunks (a third of a long TTL handed to `setTimeout` would fire after 1 ms, a
 * renewal loop), and never keeps the process alive on its own. Returns the function that stops
 * renewing. The gate keeps its Idempotency-Key claims with it too (`lost` then says whose claim it was).
 */
export function keepClaimed(
  dedupe: DedupeStore,
  id: string,
  token: string,
  ttlMs: number,
  report: (error: unknown) => void,
  lost: (id: string, ttlMs: number) => Error = lostClaim,
): () => void {
  const stop = new Stop();
  const renewals = async (): Promise<void> => {
    for (;;) {
      await realClock.sleep(ttlMs / 3, stop, renewalStopped, true);
      let held: boolean;
      try {
        held = (await dedupe.renew(id, token, ttlMs)) !== false;
      } catch (error) {
        // A store hiccup: the claim still has up to two thirds of its TTL, so try again next time.
        if (!stop.aborted) report(error);
        held = true;
      }
      // Once stopped, the id is done or released and a renewal answering false means nothing.
      if (stop.aborted) return;
      if (!held) {
        report(lost(id, ttlMs));
        return;
      }
    }
  };
  // Ends by the sleep rejecting once stopped: nothing to report then.
  renewals().catch(() => {});
  // A Stop, not an AbortController, and one error made once: an AbortController, its abort's
  // DOMException and the sleep's Error, on every delivery, were a third of a webhook's cost.
  return () => stop.abort();
}
