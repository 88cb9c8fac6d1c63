import { InvalidRequestError, SpoolError } from '../core/errors/index.js';
import { unref } from '../util/timers.js';
import type { DeadLetter, DeadLetterEntry, Spool, SpoolEntry } from './spool.js';

/** What a spool tells its {@link SpoolCore}: its name and place for messages, and how its backend fails. */
export interface SpoolBackend {
  /** The factory's name, first in every message: `postgresSpool`. */
  readonly name: string;
  /** Where the entries are, for messages: `on table "public"."outbox"`; `''` for none. */
  readonly place: string;
  /**
   * Whether a failure of the backend may pass when tried again (a lost connection, a server busy or
   * failing over): `'unavailable'`; any other is `'io'` (the backend refused the step for good).
   */
  transient(error: unknown): boolean;
}

/**
 * The open/close state every spool shares, and what a misuse answers, the same from every spool
 * (see {@link Spool}): `open` while open is {@link SpoolError} `'locked'`; any other step before
 * `open` or after `close` is `'closed'`; `close` before `open`, or again, does nothing. A spool
 * closed (or whose open failed) may be opened again, as the next process would open it.
 */
export class SpoolCore {
  #state: 'new' | 'opening' | 'open' | 'closing' | 'closed' = 'new';
  #opening: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(private readonly backend: SpoolBackend) {}

  /** Whether steps may run now. */
  get isOpen(): boolean {
    return this.#state === 'open';
  }

  /** Runs the spool's own `open` once no open is under way or done; its failure typed, the spool left closed. */
  async open(open: () => Promise<void>): Promise<void> {
    if (this.#state === 'opening' || this.#state === 'open' || this.#state === 'closing') {
      throw new SpoolError('locked', `${this.backend.name}.open: the spool is already open`);
    }
    const was = this.#state;
    this.#state = 'opening';
    const opening = (async () => open())();
    this.#opening = opening.catch(() => {});
    try {
      await opening;
    } catch (error) {
      this.#state = was;
      throw this.failure('open', error);
    }
    this.#state = 'open';
  }

  /**
   * Throws {@link SpoolError} `'closed'` unless the spool is open (or, with `beforeOpen`, not
   * opened yet: a step that needs nothing of the open, such as `appendIn`).
   */
  check(operation: string, beforeOpen = false): void {
    const unopened = this.#state === 'new' || this.#state === 'opening';
    if (this.#state === 'open' || (beforeOpen && unopened)) return;
    throw new SpoolError(
      'closed',
      `${this.backend.name}.${operation}: the spool is ${unopened ? 'not open' : 'closed'}`,
    );
  }

  /** Runs `step` once the spool is open (see {@link check}); whatever fails in it rejects typed (see {@link failure}). */
  async run<T>(operation: string, step: () => Promise<T> | T, beforeOpen = false): Promise<T> {
    this.check(operation, beforeOpen);
    try {
      return await step();
    } catch (error) {
      throw this.failure(operation, error);
    }
  }

  /**
   * Runs the spool's own `close` once, when open (an open under way is waited for first). Called
   * again meanwhile, resolves with the first; before `open` or after `close`, does nothing.
   */
  async close(close: () => Promise<void>): Promise<void> {
    if (this.#state === 'opening') await this.#opening;
    if (this.#state !== 'open') return this.#closing;
    this.#state = 'closing';
    this.#closing = close().finally(() => {
      this.#state = 'closed';
      this.#closing = undefined;
    });
    return this.#closing;
  }

  /**
   * What a step rejects with when the backend fails: a {@link SpoolError} naming the step and the
   * place, the backend's error as its `cause`, `'unavailable'` or `'io'` as the backend's
   * classifier says. The spool's own typed errors pass as they are.
   */
  failure(operation: string, error: unknown): SpoolError | InvalidRequestError {
    if (error instanceof SpoolError || error instanceof InvalidRequestError) return error;
    const { name, place, transient } = this.backend;
    const message = error instanceof Error ? error.message : String(error);
    const where = `${name}.${operation}${place ? ` ${place}` : ''}`;
    return transient(error)
      ? new SpoolError('unavailable', `${where}: unavailable: ${message}`, { cause: error })
      : new SpoolError('io', `${where}: refused: ${message}`, { cause: error });
  }

  /** The {@link InvalidRequestError} of a replace whose `members` hold an id no entry of the spool can have. */
  checkMembers(members: readonly string[], isId: (id: string) => boolean): void {
    const bad = members.find((member) => !isId(member));
    if (bad === undefined) return;
    throw new InvalidRequestError(`${this.backend.name}.replace`, [
      { field: 'members', message: `holds ${JSON.stringify(bad)}, not an id of this spool` },
    ]);
  }

  /** The {@link SpoolError} `'conflict'` of a replace that found `member` gone or held elsewhere: nothing was written. */
  conflict(member: string, why: 'acknowledged' | 'held elsewhere'): SpoolError {
    const what = why === 'acknowledged' ? 'was acknowledged already' : 'is held by another instance';
    return new SpoolError(
      'conflict',
      `${this.backend.name}.replace ${this.backend.place}: member ${member} ${what}; nothing was written`,
    );
  }
}

/** Ids per statement or script for acks, pending checks and renewals: bounds how long one holds the backend. */
const CHUNK = 1_000;

/** Runs `run` on `ids` a chunk at a time, in order; resolves with the chunks' results, concatenated. */
export async function inChunks<T>(
  ids: readonly string[],
  run: (chunk: readonly string[]) => Promise<readonly T[]>,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) out.push(...(await run(ids.slice(i, i + CHUNK))));
  return out;
}

/**
 * What a spool shared by several instances handed to this one: `take`s one at a time (two at once
 * would race on what was handed), the entries handed and not acknowledged since (never handed
 * twice, even when the backend hands one of ours back after a late renewal), and the heartbeat
 * that renews their leases, so only a dead or frozen instance loses them.
 */
export class Handout {
  readonly #held = new Set<string>();
  #takes: Promise<unknown> = Promise.resolve();
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Runs `take` after the takes before it. */
  take<T>(take: () => Promise<T>): Promise<T> {
    const result = this.#takes.then(take);
    this.#takes = result.catch(() => {});
    return result;
  }

  /** The entries of `entries` not handed before, now marked handed. */
  fresh(entries: readonly SpoolEntry[]): SpoolEntry[] {
    const fresh = entries.filter((entry) => !this.#held.has(entry.id));
    for (const entry of fresh) this.#held.add(entry.id);
    return fresh;
  }

  /** Entries done with (acknowledged, replaced): no longer renewed. */
  drop(ids: readonly string[]): void {
    for (const id of ids) this.#held.delete(id);
  }

  /**
   * Every third of `leaseMs`, `beat` with what is held (possibly nothing): best effort, a failure
   * tried again on the next beat (if the backend is unreachable, no other instance can claim either;
   * an entry claimed anyway is sent under its key, counted once). Never two beats at once; its
   * timer never keeps the process alive.
   */
  startRenewal(leaseMs: number, beat: (held: string[]) => Promise<void>): void {
    let beating = false;
    const renew = async (): Promise<void> => {
      if (beating) return;
      beating = true;
      try {
        await beat([...this.#held]);
      } catch {
        // Tried again on the next beat.
      } finally {
        beating = false;
      }
    };
    this.#timer = unref(setInterval(() => void renew(), Math.max(10, Math.floor(leaseMs / 3))));
  }

  /** Stops the renewal, waits for the take under way; resolves with what was held, now forgotten. */
  async stop(): Promise<string[]> {
    clearInterval(this.#timer);
    await this.#takes;
    const held = [...this.#held];
    this.#held.clear();
    return held;
  }
}

/**
 * A spool's dead-letter store: only its storage statements, each one atomic step. The ids it is
 * given are of its form already ({@link deadLetterSteps} skipped the others), and never empty.
 */
export interface DeadLetterStorage {
  /** Whether `id` can be an entry of the spool. */
  isEntryId(id: string): boolean;
  /** Whether `id` can be a letter of the store. */
  isLetterId(id: string): boolean;
  /** Moves the entries still in the spool into the store, with their reasons. */
  move(entries: readonly DeadLetterEntry[]): Promise<void>;
  /** The letters, oldest first, at most `max` (`undefined`: all). */
  list(max: number | undefined): Promise<DeadLetter[]>;
  /** Moves the letters back into the spool (events unchanged); resolves with those moved. */
  replay(ids: readonly string[] | 'all'): Promise<string[]>;
  /** Deletes the letters; resolves with those deleted. */
  drop(ids: readonly string[] | 'all'): Promise<string[]>;
}

/** The dead-letter steps of {@link Spool}, as every durable spool of the SDK has them. */
export type DeadLetterSteps = Required<
  Pick<Spool, 'deadLetter' | 'listDeadLetters' | 'replayDeadLetters' | 'dropDeadLetters'>
>;

/**
 * The dead-letter steps of a spool over its `storage`: each runs once the spool is open, its
 * failure typed (see {@link SpoolCore.run}); ids that cannot be the backend's are skipped (as
 * `ack` skips them), and a step left with none does no I/O. With `handout` (a shared spool's
 * current {@link Handout}), entries moved are no longer renewed, whatever happens: if the move
 * failed, their lease expires and they are sent again under their keys rather than held for ever.
 */
export function deadLetterSteps(
  core: SpoolCore,
  storage: DeadLetterStorage,
  handout?: () => Handout,
): DeadLetterSteps {
  const letters = (ids: readonly string[] | 'all'): string[] | 'all' =>
    ids === 'all' ? ids : ids.filter((id) => storage.isLetterId(id));
  const some = (ids: string[] | 'all'): boolean => ids === 'all' || ids.length > 0;
  return {
    deadLetter: (entries) =>
      core.run('deadLetter', async () => {
        handout?.().drop(entries.map((entry) => entry.id));
        const known = entries.filter((entry) => storage.isEntryId(entry.id));
        if (known.length) await storage.move(known);
      }),
    listDeadLetters: (max) => core.run('listDeadLetters', () => storage.list(max)),
    replayDeadLetters: (ids) =>
      core.run('replayDeadLetters', async () => {
        const chosen = letters(ids);
        return some(chosen) ? storage.replay(chosen) : [];
      }),
    dropDeadLetters: (ids) =>
      core.run('dropDeadLetters', async () => {
        const chosen = letters(ids);
        return some(chosen) ? storage.drop(chosen) : [];
      }),
  };
}
