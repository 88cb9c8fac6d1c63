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

/** A default stream or table of another service, and what it holds. */
export interface OtherSpool {
  /** Its stream key or table name, as `--stream` or `--table` takes it. */
  name: string;
  /** Events not yet recorded or dead-lettered. */
  waiting: number;
  /** Age in ms of the oldest of them; `undefined` when none or unknown. */
  oldestMs?: number | undefined;
}

/** A spool named by the command line, with the connection it was made on. */
export interface SpoolTarget {
  /** For messages: what and where, passwords left out. */
  readonly label: string;
  /** The spool (made once, on the target's connection). */
  readonly spool: Spool;
  /** Looks at the backend directly, without taking anything from the spool. */
  backlog(): Promise<Backlog>;
  /**
   * The default streams or tables of other services (another API key or base URL, or the bare
   * default of earlier releases) beside this one, each with its backlog: what a key rotation
   * leaves behind. `undefined` when they cannot be listed here (a Redis Cluster); absent for a
   * file spool, whose place is the user's.
   */
  others?(): Promise<OtherSpool[] | undefined>;
  /** Closes the connection the target opened (after the spool's close). */
  close(): Promise<void>;
}

/** The options every target takes. */
export interface TargetOptions {
  /** Connections the spool may need at once (a relay's concurrency and its listener). */
  connections: number;
  /**
   * The service whose default stream or table the spool is when the flags name none (see
   * `serviceOfFlags`); `undefined`: the flags name it, or the bare default.
   */
  service: string | undefined;
}
