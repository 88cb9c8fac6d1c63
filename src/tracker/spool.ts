import type { UsageWriteParams } from '../resources/usage.js';
import type { UsageEventRefused } from '../schemas/usage.js';

/** A usage event as the tracker sends it: checked, with its `event_key` fixed before any send. */
export type SpooledEvent = UsageWriteParams & {
  /** The idempotency key, fixed before the first send: every send of the event carries it. */
  event_key: string;
};

/** One entry of a {@link Spool}: an event tracked (or an aggregate formed) and not yet acknowledged. */
export interface SpoolEntry {
  /** The spool's id of the entry, unique within the spool. */
  id: string;
  /** The event to send, with the key it must always be sent under. */
  event: SpooledEvent;
}

/**
 * Why an entry was dead-lettered, as a spool keeps it: plain JSON, so it outlives the process that
 * sent it. The service's refusal as it answered, or what the error said (the error itself, with its
 * request and headers, is told to `onDeadLetter` only).
 */
export type DeadLetterCause =
  | {
      /** The service answered `accepted: false`. */
      type: 'refused';
      /** Its answer, with its `error_code`. */
      result: UsageEventRefused;
    }
  | {
      /** The service (or the request) failed for good: a 400, an unknown account (404), a 422… */
      type: 'error';
      /** The error's class name: `BadRequestError`. */
      name: string;
      /** The error's message. */
      message: string;
      /** The HTTP status, when the service answered one. */
      status?: number | undefined;
      /** The service's answer body, when it gave one. */
      body?: unknown;
    };

/** What a tracker hands {@link Spool.deadLetter}: an entry it gives up on, and why. */
export interface DeadLetterEntry {
  /** The spool's id of the entry (as {@link Spool.take} handed it). */
  id: string;
  /** Why it was given up on: the service's answer or error. */
  reason: DeadLetterCause;
  /** Sends of the entry by the process that gave up on it (earlier runs' not counted). */
  attempts: number;
  /** When that process first sent it (ISO 8601). */
  firstAttemptAt: string;
  /** When it was given up on (ISO 8601). */
  deadLetteredAt: string;
}

/** A dead letter as a durable spool keeps it: the event, under its original `event_key`, and why it was given up on. */
export interface DeadLetter extends Omit<DeadLetterEntry, 'id'> {
  /** The id of the letter in the spool's dead-letter store (not the entry's id in the spool). */
  id: string;
  /** The event as it was spooled, with the `event_key` a replay sends again. */
  event: SpooledEvent;
}

/**
 * Where a usage tracker keeps events between `track` and the service's answer: the contract that
 * `memorySpool()`, `fileSpool(dir)` (`billing-sdk/node`), `redisSpool(client)`
 * (`billing-sdk/redis`) and `postgresSpool(db)` (`billing-sdk/postgres`) share, each tested by one suite. An entry stays in the spool from
 * {@link append} until {@link ack}; a durable spool hands the entries of a run that died to the
 * next {@link take} after {@link open}, with their original keys, so an event is recorded exactly
 * once whatever crashes (the service answers a repeated key `idempotent: true`).
 *
 * Every spool of the SDK answers a misuse alike (they share one core, `tracker/spool-core.ts`):
 * - {@link open} while open (or opening) rejects with `SpoolError` `'locked'`; the spool stays open.
 * - any other step before {@link open}, or after {@link close}, rejects with `SpoolError` `'closed'`
 *   (only {@link appendIn} may come before {@link open}: it needs nothing but the transaction).
 * - {@link close} before {@link open}, or again, resolves and does nothing; a second call while the
 *   first runs resolves with it.
 * - a spool closed may be opened again: it then hands what is left first, as the next process would.
 *
 * A backend failure rejects with `SpoolError` `'unavailable'` when it may pass if tried again (a
 * lost connection, a server busy or failing over), and `'io'` when the backend refused the step
 * for good; each backend has one classifier, shared with its stores.
 */
export interface Spool {
  /** Whether entries outlive the process (false for memory: they die with it). */
  readonly durable: boolean;
  /** Opens the spool (takes its lock, reads what a previous run left). Called first (again only after {@link close}). */
  open(): Promise<void>;
  /**
   * Appends events; resolves with their ids, in order, once they are durable (a file spool's group
   * commit, Redis's XADD). Rejects, typed, when they could not be stored: never pretends durability.
   */
  append(events: readonly SpooledEvent[]): Promise<string[]>;
  /**
   * Up to `max` entries to send that this process has not been handed yet: what a previous run left
   * first, then in append order (with Redis: new entries of the shared stream, and entries another
   * instance left pending longer than the claim time). Resolves `[]` when there is none right now.
   */
  take(max: number): Promise<SpoolEntry[]>;
  /** Marks entries done (recorded, or dead-lettered): never handed out again, by any process. */
  ack(ids: readonly string[]): Promise<void>;
  /**
   * In one atomic step, appends `aggregate` and acknowledges `members`, which it replaces: after a
   * crash either the members or the aggregate are left, never both. Resolves with the aggregate's id.
   */
  replace(members: readonly string[], aggregate: SpooledEvent): Promise<string>;
  /** Which of `ids` are not acknowledged yet (by any process sharing the spool). */
  pending(ids: readonly string[]): Promise<string[]>;
  /**
   * Optional: how many entries the spool holds for this process, asked once right after
   * {@link open} and before any {@link append}, i.e. what a previous run left that {@link take}
   * will hand this process. A tracker counts them in `stats().queued` and in what `close()` leaves
   * `unsent` before it has taken them; without this method it counts only what it has taken. A
   * spool shared by several instances counts only what it will hand this one, never what the others
   * hold.
   */
  size?(): Promise<number>;
  /**
   * Optional: appends events through the caller's own open database transaction (`postgresSpool`:
   * a node-postgres client inside BEGIN, or the `tx` of postgres.js `sql.begin`), and wakes the
   * spool's relays once it commits (NOTIFY, delivered at commit). Resolves with their ids; the
   * entries exist only if that transaction commits, so a rollback leaves nothing to send. What
   * `track(event, { transaction })` calls; a spool without it cannot take part in a transaction.
   * Rejects with an `InvalidRequestError` naming `transaction` when it is no transaction the spool
   * can write through. Needs neither {@link open} nor a connection of the spool's own: the
   * application's transactions may hold every connection there is.
   */
  appendIn?(transaction: unknown, events: readonly SpooledEvent[]): Promise<string[]>;
  /**
   * Optional: calls `wake` whenever entries may have arrived from elsewhere (another instance's
   * append, a transaction that committed: a NOTIFY, or the spool's poll), so a tracker takes them at
   * once instead of on its idle poll. Returns the function that stops the calls. Called once the
   * spool is open.
   */
  watch?(wake: () => void): () => void;
  /**
   * Optional (the durable spools of the SDK): in one atomic step, moves entries out of the spool
   * into its dead-letter store (a table, stream or file beside the spool's), each with its cause,
   * attempts and times: never handed out again, kept until replayed or dropped. An id no longer in
   * the spool (acknowledged by another instance meanwhile) is skipped. A tracker calls it instead of
   * {@link ack} for an entry it gives up on; without it, such an entry is acknowledged (the memory
   * spool: only `onDeadLetter` is told).
   */
  deadLetter?(entries: readonly DeadLetterEntry[]): Promise<void>;
  /** Optional, with {@link deadLetter}: the dead letters kept, oldest first, at most `max` (default all). */
  listDeadLetters?(max?: number): Promise<DeadLetter[]>;
  /**
   * Optional, with {@link deadLetter}: in one atomic step, moves the letters `ids` (or every one)
   * back into the spool, their events unchanged (the service answers a key it recorded
   * `idempotent: true`: a replay never charges twice). Resolves with the ids of the letters moved;
   * an id that is no letter is skipped.
   */
  replayDeadLetters?(ids: readonly string[] | 'all'): Promise<string[]>;
  /** Optional, with {@link deadLetter}: deletes the letters `ids` (or every one) for good; resolves with the ids deleted. */
  dropDeadLetters?(ids: readonly string[] | 'all'): Promise<string[]>;
  /** Releases the spool (lock, files, timers); what was not acknowledged stays in a durable spool. Never rejects for a misuse. */
  close(): Promise<void>;
}
