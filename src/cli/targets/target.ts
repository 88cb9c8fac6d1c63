import type { Spool } from '../../tracker/spool.js';

/** What a spool holds right now, as `doctor` reports it. */
export interface Backlog {
  /** Whether its table, stream or log exists (a relay's first open makes it). */
  present: boolean;
  /** Events not yet recorded or dead-lettered, by any process; `undefined` when it cannot be counted now. */
  waiting?: number | undefined;
  /** Age in ms of the oldest of them; `undefined` when none or unknown. */
  oldestMs?: number | undefined;
  /** Why a count is missing, when it is. */
  note?: string | undefined;
}

/** A spool named by the command line, with the connection it was made on. */
export interface SpoolTarget {
  /** For messages: what and where, passwords left out. */
  readonly label: string;
  /** The spool (made once, on the target's connection). */
  readonly spool: Spool;
  /** Looks at the backend directly, without taking anything from the spool. */
  backlog(): Promise<Backlog>;
  /** Closes the connection the target opened (after the spool's close). */
  close(): Promise<void>;
}

/** The options every target takes. */
export interface TargetOptions {
  /** Connections the spool may need at once (a relay's concurrency and its listener). */
  connections: number;
}
