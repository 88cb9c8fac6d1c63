import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SpoolError } from '../core/errors/index.js';
import { check, checkOptions, integer, required, text } from '../internal/checks.js';
import type { DeadLetter, DeadLetterEntry, Spool, SpoolEntry, SpooledEvent } from '../tracker/spool.js';
import { type DeadLetterSteps, deadLetterSteps, SpoolCore } from '../tracker/spool-core.js';
import { checkStorable } from '../tracker/storable-event.js';
import { DeadLetterFile, deadLetterStorage } from './dead-letter-file.js';
import { type FileLock, releaseLock, takeLock } from './file-lock.js';
import { ignoreMissing, syncDir } from './fs.js';
import { COMPACT, LogWriter } from './log-writer.js';
import { ackLine, decodeLog, entryLine, replaceLine, type SpoolRecord, startLine } from './record-format.js';

/** Options of {@link fileSpool}. */
export interface FileSpoolOptions {
  /**
   * Size in bytes past which the log is compacted, when more than half of it is acknowledged
   * records: the live entries are copied to a new file that replaces the log. Default 8 MiB.
   */
  compactAfterBytes?: number | undefined;
}

const LOG = 'spool.log';

/**
 * A live entry: the event as stored (JSON), when it was appended (ms since the epoch; `undefined`
 * for an entry of a log written before times were recorded), and the size of its line in a
 * compacted log.
 */
interface Live {
  json: string;
  at: number | undefined;
  bytes: number;
}

/**
 * A durable {@link Spool} for `createUsageTracker`: an append-only log in `dir` (created if
 * missing), so that events tracked by a process that dies are sent by the next one to open the
 * same directory, with their original keys.
 *
 * - **Group commit**: every `append`, `ack` and `replace` waiting at one moment shares one write and
 *   one `fdatasync`; `append` resolves only once its bytes are synced, so a tracked event survives
 *   a crash of the process or of the machine.
 * - **One process at a time**: `open()` takes `dir/lock` (holding the pid); a second opener gets a
 *   `SpoolError` with code `'locked'` while that process lives, and takes the lock over once it is dead.
 * - **Replay**: `open()` reads the log; unacknowledged events are the leftovers that `take` hands
 *   out first. A torn last line (a crash in the middle of a write) is dropped; a record that cannot
 *   be read anywhere else is a `SpoolError` with code `'corrupt'` (never silently skipped).
 * - **Dead letters**: an event the service refuses for good is moved to `dir/dead-letters.log`
 *   (the event, the service's answer or error, attempts and times), synced before its entry is
 *   acknowledged in the log, where `deadLetters(spool)` lists, replays or drops it.
 * - **Compaction**: past `compactAfterBytes`, when more than half of the log is acknowledged, the
 *   live entries are written to a new file that atomically replaces the log, while appends go on.
 *
 * Node only (`billing-sdk/node`).
 *
 * @param dir - The spool's directory; one process uses it at a time.
 * @param options - {@link FileSpoolOptions}.
 * @throws {@link billing-sdk!InvalidRequestError} when `dir` or an option is invalid, or `options`
 * is not a plain object or `undefined`.
 *
 * @example
 * ```ts
 * import { createUsageTracker } from 'billing-sdk';
 * import { fileSpool } from 'billing-sdk/node';
 * const tracker = createUsageTracker(billing, { spool: fileSpool('/var/lib/my-app/usage') });
 * ```
 */
export function fileSpool(dir: string, options?: FileSpoolOptions): Spool {
  check('fileSpool', { dir }, { dir: [required, text] });
  const opts = checkOptions('fileSpool', options, { compactAfterBytes: [integer(1)] }) as FileSpoolOptions;
  return new FileSpool(dir, opts.compactAfterBytes ?? 8 * 1024 * 1024);
}

/**
 * When the oldest unacknowledged entry of an open {@link fileSpool} was appended, in ms since the
 * epoch: what `billing-sdk doctor` reports as the backlog's age. `undefined` when nothing waits, when
 * the waiting entries come from a log written before append times were recorded, or when `spool`
 * is not a file spool. Internal: not exported from `billing-sdk/node`.
 */
export function oldestAppendedAt(spool: Spool): number | undefined {
  return spool instanceof FileSpool ? spool.oldestAt() : undefined;
}

class FileSpool implements Spool {
  readonly durable = true;
  readonly #dir: string;
  readonly #logPath: string;
  readonly #core: SpoolCore;
  /** Group commit and compaction of the log (see {@link LogWriter}). */
  readonly #writer: LogWriter;
  #lock: FileLock | undefined;
  /** Unacknowledged entries in append order (leftovers of earlier runs first). */
  readonly #live = new Map<string, Live>();
  /** Ids not handed out by `take` yet, in order, from `#head` on (acknowledged ones are skipped). */
  #toHand: string[] = [];
  #head = 0;
  #next = 1;
  /** Bytes the live entries would take in a compacted log. */
  #liveBytes = 0;
  readonly #letters: DeadLetterFile;
  readonly #deadLetters: DeadLetterSteps;

  constructor(dir: string, compactAfter: number) {
    this.#dir = dir;
    this.#logPath = join(dir, LOG);
    // Every failure here is the file system's: none passes by trying again at once.
    this.#core = new SpoolCore({ name: 'fileSpool', place: `in ${dir}`, transient: () => false });
    this.#writer = new LogWriter(dir, this.#logPath, compactAfter, {
      isOpen: () => this.#core.isOpen,
      liveBytes: () => this.#liveBytes,
      snapshot: () => {
        const parts = [startLine(this.#next)];
        // The time is kept: a compacted log must not make its backlog look younger.
        for (const [id, live] of this.#live) parts.push(entryLine(id, live.json, live.at));
        return parts.join('');
      },
    });
    this.#letters = new DeadLetterFile(dir);
    this.#deadLetters = deadLetterSteps(
      this.#core,
      deadLetterStorage(this.#letters, {
        jsonOf: (id) => this.#live.get(id)?.json,
        appendJson: (jsons) => this.#appendJson(jsons),
        ack: (ids) => this.ack(ids),
      }),
    );
  }

  async deadLetter(entries: readonly DeadLetterEntry[]): Promise<void> {
    this.#usable('deadLetter');
    return this.#deadLetters.deadLetter(entries);
  }

  listDeadLetters(max?: number): Promise<DeadLetter[]> {
    return this.#deadLetters.listDeadLetters(max);
  }

  async replayDeadLetters(ids: readonly string[] | 'all'): Promise<string[]> {
    this.#usable('replayDeadLetters');
    return this.#deadLetters.replayDeadLetters(ids);
  }

  dropDeadLetters(ids: readonly string[] | 'all'): Promise<string[]> {
    return this.#deadLetters.dropDeadLetters(ids);
  }

  /**
   * Opens the spool: takes the lock and replays the log. Again after `close()` (or a failed open) it
   * starts over from the files, as the next process would.
   */
  async open(): Promise<void> {
    await this.#core.open(() => this.#open());
    this.#writer.compactIfDue();
  }

  async #open(): Promise<void> {
    this.#live.clear();
    this.#toHand = [];
    this.#head = 0;
    this.#next = 1;
    this.#liveBytes = 0;
    this.#writer.reset();
    try {
      await mkdir(this.#dir, { recursive: true });
      this.#lock = await takeLock(this.#dir);
      // A compaction that crashed before its rename left a partial copy; the log is whole.
      await unlink(join(this.#dir, COMPACT)).catch(ignoreMissing);
      const bytes = await this.#replay();
      await this.#letters.load();
      this.#writer.attach(await open(this.#logPath, 'a'), bytes ?? 0);
      // A new log's name must be durable before an append to it can be called durable.
      if (bytes === undefined) await syncDir(this.#dir);
      await this.#ackMoved();
    } catch (error) {
      await this.#writer.detach();
      if (this.#lock) await releaseLock(this.#lock);
      this.#lock = undefined;
      throw error;
    }
  }

  /** Acknowledges in the log the entries whose letters are kept: a move that a crash cut in two. */
  async #ackMoved(): Promise<void> {
    const moved = [...this.#letters.froms()].filter((id) => this.#live.has(id));
    if (!moved.length) return;
    await this.#writer.writeNow(ackLine(moved));
    for (const id of moved) this.#remove(id);
  }

  /**
   * Reads the log into memory; drops (and truncates away) a torn last line. Returns the log's size
   * once read, or `undefined` when there is no log yet.
   */
  async #replay(): Promise<number | undefined> {
    let data: Buffer;
    try {
      data = await readFile(this.#logPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new SpoolError('io', `fileSpool: cannot read ${this.#logPath}`, { cause: error });
    }
    const { records, end } = decodeLog(data, this.#logPath);
    for (const record of records) this.#apply(record);
    if (end < data.length) {
      // The torn line was never synced (its append never resolved): cut it off, and make the cut
      // durable before anything is appended after it (or it could come back, mid-file).
      const handle = await open(this.#logPath, 'r+');
      try {
        await handle.truncate(end);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    return end;
  }

  /** Applies one durable record to the in-memory state (at replay, and after each group commit). */
  #apply(record: SpoolRecord): void {
    switch (record.t) {
      case 'e':
        this.#add(record.id, JSON.stringify(record.event), record.at);
        break;
      case 'a':
        for (const id of record.ids) this.#remove(id);
        break;
      case 'r':
        for (const id of record.members) this.#remove(id);
        this.#add(record.id, JSON.stringify(record.event), record.at);
        break;
      case 's':
        this.#next = Math.max(this.#next, record.next);
        break;
    }
  }

  /** Adds a live entry; `line` is its `e` line when the caller has it (its size counts toward compaction). */
  #add(id: string, json: string, at: number | undefined, line = entryLine(id, json, at)): void {
    const bytes = Buffer.byteLength(line);
    const old = this.#live.get(id);
    if (old) this.#liveBytes -= old.bytes;
    else this.#toHand.push(id);
    this.#live.set(id, { json, at, bytes });
    this.#liveBytes += bytes;
    const n = Number(id);
    if (n >= this.#next) this.#next = n + 1;
  }

  #remove(id: string): void {
    const live = this.#live.get(id);
    if (!live) return; // acknowledged twice, or compacted away: nothing to do
    this.#live.delete(id);
    this.#liveBytes -= live.bytes;
  }

  #usable(operation: string): void {
    this.#core.check(operation);
    if (this.#writer.broken) throw this.#writer.broken;
  }

  async append(events: readonly SpooledEvent[]): Promise<string[]> {
    this.#usable('append');
    checkStorable('fileSpool.append', events);
    return this.#appendJson(events.map((event) => JSON.stringify(event)));
  }

  /** Appends events given as JSON; resolves with their ids once synced. */
  async #appendJson(jsons: readonly string[]): Promise<string[]> {
    if (!jsons.length) return [];
    const ids: string[] = [];
    const adds: [string, string, string][] = [];
    const at = Date.now();
    let line = '';
    for (const json of jsons) {
      const id = String(this.#next++);
      const own = entryLine(id, json, at);
      ids.push(id);
      adds.push([id, json, own]);
      line += own;
    }
    await this.#writer.commit(line, () => {
      for (const [id, json, own] of adds) this.#add(id, json, at, own);
    });
    return ids;
  }

  async take(max: number): Promise<SpoolEntry[]> {
    this.#usable('take');
    const out: SpoolEntry[] = [];
    while (out.length < max && this.#head < this.#toHand.length) {
      const id = this.#toHand[this.#head++]!;
      const live = this.#live.get(id);
      if (live) out.push({ id, event: JSON.parse(live.json) as SpooledEvent });
    }
    if (this.#head > 1024 && this.#head * 2 > this.#toHand.length) {
      this.#toHand = this.#toHand.slice(this.#head);
      this.#head = 0;
    }
    return out;
  }

  async ack(ids: readonly string[]): Promise<void> {
    this.#usable('ack');
    const known = ids.filter((id) => this.#live.has(id));
    if (!known.length) return;
    await this.#writer.commit(ackLine(known), () => {
      for (const id of known) this.#remove(id);
    });
  }

  async replace(members: readonly string[], aggregate: SpooledEvent): Promise<string> {
    this.#usable('replace');
    const id = String(this.#next++);
    const json = JSON.stringify(aggregate);
    const at = this.#oldestOf(members) ?? Date.now();
    await this.#writer.commit(replaceLine(members, id, json, at), () => {
      for (const member of members) this.#remove(member);
      this.#add(id, json, at);
    });
    return id;
  }

  async pending(ids: readonly string[]): Promise<string[]> {
    this.#usable('pending');
    return ids.filter((id) => this.#live.has(id));
  }

  /** The earliest append time among `ids` still live; `undefined` when none is known. */
  #oldestOf(ids: Iterable<string>): number | undefined {
    let oldest: number | undefined;
    for (const id of ids) {
      const at = this.#live.get(id)?.at;
      if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
    }
    return oldest;
  }

  /** When the oldest unacknowledged entry was appended (see {@link oldestAppendedAt}). */
  oldestAt(): number | undefined {
    this.#usable('oldestAt');
    return this.#oldestOf(this.#live.keys());
  }

  /** Unacknowledged entries: right after `open()`, what earlier runs left. */
  async size(): Promise<number> {
    this.#usable('size');
    return this.#live.size;
  }

  close(): Promise<void> {
    return this.#core.close(async () => {
      // Appends already queued are written; a compaction under way finishes (or is abandoned).
      await this.#writer.drain();
      await this.#writer.detach();
      if (this.#lock) await releaseLock(this.#lock);
      this.#lock = undefined;
    });
  }
}
