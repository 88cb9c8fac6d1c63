import type { UsageWriteParams } from '../resources/usage.js';

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
  /** Releases the spool (lock, files, timers); what was not acknowledged stays in a durable spool. Never rejects for a misuse. */
  close(): Promise<void>;
}
