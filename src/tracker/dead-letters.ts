import { APIError, InvalidRequestError } from '../core/errors/index.js';
import { checkArgs, integer, type Rule } from '../internal/checks.js';
import type { DeadLetterReason } from './options.js';
import type { DeadLetter, DeadLetterCause, Spool } from './spool.js';

/** The dead letters of a durable spool, from code: what `billing-sdk dead-letters` runs. */
export interface DeadLetters {
  /** The letters kept, oldest first; at most `max` of them (default every one). */
  list(options?: { max?: number | undefined }): Promise<DeadLetter[]>;
  /**
   * Moves the letters `ids` (or `'all'`) back into the spool, in one atomic step, each event under
   * its original `event_key`: a running tracker (or relay) sends them again, and the service answers
   * a key it had recorded `idempotent: true`, so a replay never charges twice. Resolves with the
   * ids of the letters moved (an id that is no letter is skipped).
   */
  replay(ids: readonly string[] | 'all'): Promise<string[]>;
  /** Deletes the letters `ids` (or `'all'`) for good; resolves with the ids deleted. */
  drop(ids: readonly string[] | 'all'): Promise<string[]>;
}

/** A spool that keeps dead letters. */
type KeepingSpool = Spool &
  Required<Pick<Spool, 'deadLetter' | 'listDeadLetters' | 'replayDeadLetters' | 'dropDeadLetters'>>;

/** `ids` as list/replay/drop take them: `'all'`, or an array of non-empty strings. */
const letterIds: Rule = (v) =>
  v === 'all' || (Array.isArray(v) && v.every((id) => typeof id === 'string' && id !== ''))
    ? undefined
    : "must be 'all' or an array of non-empty strings";

/**
 * The dead letters a durable spool keeps (`fileSpool`, `redisSpool`, `postgresSpool`): events the
 * service refused for good (an unknown meter, a 400…), each with its reason, attempts and times,
 * moved out of the spool by the tracker that gave up on them (and told to its `onDeadLetter`).
 * List them, replay them once the cause is fixed, or drop them. The spool must be open (for a file
 * spool, that takes its lock: stop the process using it first, or call this from that process).
 *
 * @param spool - The spool the tracker uses, opened.
 * @returns {@link DeadLetters}; each method rejects as the spool's steps do (`SpoolError`).
 * @throws {@link InvalidRequestError} naming `spool` when it keeps no dead letters (`memorySpool`:
 * its dead letters are only told to `onDeadLetter`), or when it is a `redisSpool` or
 * `postgresSpool` without a `stream` or `table` name: a tracker keeps such a spool's events (and
 * letters) under its service's name, which this copy does not know.
 * @example
 * ```ts
 * import { deadLetters } from 'billing-sdk';
 * const spool = postgresSpool(pool, { table: 'usage_outbox' }); // the table the app's tracker uses
 * await spool.open();
 * const letters = deadLetters(spool);
 * for (const letter of await letters.list()) console.log(letter.id, letter.reason, letter.event.event_key);
 * await letters.replay('all'); // once the meter exists
 * ```
 */
export function deadLetters(spool: Spool): DeadLetters {
  // Its letters are the service's, in a place only the tracker's copy of it knows: reading the
  // unnamed default instead would answer "none" while the tracker's letters wait elsewhere.
  if (typeof (spool as { forService?: unknown } | null)?.forService === 'function') {
    throw new InvalidRequestError('deadLetters', [
      {
        field: 'spool',
        message:
          "names no stream or table: a tracker uses its service's own (billing-sdk doctor names it); give the spool that name, or use billing-sdk dead-letters",
      },
    ]);
  }
  if (!keepsDeadLetters(spool)) {
    throw new InvalidRequestError('deadLetters', [
      { field: 'spool', message: 'keeps no dead letters (a memory spool only tells onDeadLetter)' },
    ]);
  }
  return {
    list(options) {
      const max = options?.max;
      checkArgs('deadLetters.list', [['options.max', [integer(1)], max ?? 1]]);
      return spool.listDeadLetters(max);
    },
    replay(ids) {
      checkArgs('deadLetters.replay', [['ids', [letterIds], ids]]);
      return spool.replayDeadLetters(ids);
    },
    drop(ids) {
      checkArgs('deadLetters.drop', [['ids', [letterIds], ids]]);
      return spool.dropDeadLetters(ids);
    },
  };
}

/** Whether `spool` keeps dead letters (has every optional step of them). */
export function keepsDeadLetters(spool: Spool | undefined): spool is KeepingSpool {
  return (
    typeof spool?.deadLetter === 'function' &&
    typeof spool.listDeadLetters === 'function' &&
    typeof spool.replayDeadLetters === 'function' &&
    typeof spool.dropDeadLetters === 'function'
  );
}

/** The cause a spool keeps of a tracker's {@link DeadLetterReason}: JSON only. */
export function causeOf(reason: DeadLetterReason): DeadLetterCause {
  if (reason.type === 'refused') return { type: 'refused', result: reason.result };
  const { error } = reason;
  if (error instanceof APIError)
    return {
      type: 'error',
      name: error.name,
      message: error.message,
      status: error.status,
      body: error.body,
    };
  return { type: 'error', name: error.name, message: error.message };
}
