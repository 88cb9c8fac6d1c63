import { type FileHandle, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SpoolError } from '../core/errors/index.js';
import { check, checkOptions, integer, required, text } from '../internal/checks.js';
import { letterMeta } from '../tracker/dead-letter-record.js';
import type { DeadLetter, DeadLetterEntry, Spool, SpoolEntry, SpooledEvent } from '../tracker/spool.js';
import { type DeadLetterSteps, deadLetterSteps, SpoolCore } from '../tracker/spool-core.js';
import { DeadLetterFile } from './dead-letter-file.js';
import { type FileLock, releaseLock, takeLock } from './file-lock.js';
import { createSynced, ignoreMissing, syncDir, writeAll, writeSynced } from './fs.js';
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
const COMPACT = 'spool.log.compact';

/** A live entry: the event as stored (JSON), and the size of its line in a compacted log. */
interface Live {
  json: string;
  bytes: number;
}

/** An operation waiting for the next group commit: its line, and what to do once it is durable. */
interface Op {
  line: string;
  apply: () => void;
  fail: (error: unknown) => void;
}

/** A compaction under way: the snapshot file, and what was appended to the old log since. */
interface Compaction {
  tail: Buffer[];
  tailBytes: number;
  /** Set once the snapshot is written and synced: the swap is then due. */
  ready?: { handle: FileHandle; bytes: number } | undefined;
  /** Settles once the snapshot is written (then `ready` is set and the writer started) or abandoned. */
  written?: Promise<void> | undefined;
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

class FileSpool implements Spool {
  readonly durable = true;
  readonly #dir: string;
  readonly #logPath: string;
  readonly #compactAfter: number;
  readonly #core: SpoolCore;
  #handle: FileHandle | undefined;
  #lock: FileLock | undefined;
  /** Unacknowledged entries in append order (leftovers of earlier runs first). */
  readonly #live = new Map<string, Live>();
  /** Ids not handed out by `take` yet, in order, from `#head` on (acknowledged ones are skipped). */
  #toHand: string[] = [];
  #head = 0;
  #next = 1;
  /** Bytes of the log file, and bytes its live entries would take in a compacted log. */
  #logBytes = 0;
  #liveBytes = 0;
  /** Compaction waits until the log reaches this size (raised after a failed attempt). */
  #compactAt: number;
  #batch: Op[] = [];
  #pump: Promise<void> | undefined;
  #compaction: Compaction | undefined;
  /** Set when a write or sync failed: the log's tail is then unknown, so nothing more is accepted. */
  #broken: SpoolError | undefined;
  readonly #letters: DeadLetterFile;
  readonly #deadLetters: DeadLetterSteps;

  constructor(dir: string, compactAfter: number) {
    this.#dir = dir;
    this.#logPath = join(dir, LOG);
    this.#compactAfter = compactAfter;
    this.#compactAt = compactAfter;
    // Every failure here is the file system's: none passes by trying again at once.
    this.#core = new SpoolCore({ name: 'fileSpool', place: `in ${dir}`, transient: () => false });
    this.#letters = new DeadLetterFile(dir);
    const isId = (id: string) => /^[1-9]\d*$/.test(id);
    this.#deadLetters = deadLetterSteps(this.#core, {
      isEntryId: isId,
      isLetterId: isId,
      move: (entries) => this.#moveToLetters(entries),
      list: async (max) => this.#letters.list(max),
      replay: async (ids) => {
        const chosen = this.#letters.chosen(ids);
        if (!chosen.length) return [];
        // Back in the log first: a crash before the letters are removed leaves an event in both,
        // sent again under its key (counted once), never one in neither.
        await this.#appendJson(chosen.map(([, letter]) => letter.json));
        const replayed = chosen.map(([id]) => id);
        await this.#letters.remove(replayed);
        return replayed;
      },
      drop: async (ids) => {
        const dropped = this.#letters.chosen(ids).map(([id]) => id);
        if (dropped.length) await this.#letters.remove(dropped);
        return dropped;
      },
    });
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

  /** The letter durable first, then its entry acknowledged in the log (see {@link DeadLetterFile}). */
  async #moveToLetters(entries: readonly DeadLetterEntry[]): Promise<void> {
    const known = entries.filter((entry) => this.#live.has(entry.id));
    if (!known.length) return;
    await this.#letters.add(
      known.map((entry) => ({
        from: entry.id,
        json: this.#live.get(entry.id)!.json,
        meta: letterMeta(entry),
      })),
    );
    await this.ack(known.map((entry) => entry.id));
  }

  /**
   * Opens the spool: takes the lock and replays the log. Again after `close()` (or a failed open) it
   * starts over from the files, as the next process would.
   */
  async open(): Promise<void> {
    await this.#core.open(() => this.#open());
    this.#maybeCompact();
  }

  async #open(): Promise<void> {
    this.#live.clear();
    this.#toHand = [];
    this.#head = 0;
    this.#next = 1;
    this.#logBytes = 0;
    this.#liveBytes = 0;
    this.#compactAt = this.#compactAfter;
    this.#broken = undefined;
    try {
      await mkdir(this.#dir, { recursive: true });
      this.#lock = await takeLock(this.#dir);
      // A compaction that crashed before its rename left a partial copy; the log is whole.
      await unlink(join(this.#dir, COMPACT)).catch(ignoreMissing);
      const created = await this.#replay();
      await this.#letters.load();
      this.#handle = await open(this.#logPath, 'a');
      // A new log's name must be durable before an append to it can be called durable.
      if (created) await syncDir(this.#dir);
      await this.#ackMoved();
    } catch (error) {
      await this.#handle?.close().catch(() => undefined);
      this.#handle = undefined;
      if (this.#lock) await releaseLock(this.#lock);
      this.#lock = undefined;
      throw error;
    }
  }

  /** Acknowledges in the log the entries whose letters are kept: a move that a crash cut in two. */
  async #ackMoved(): Promise<void> {
    const moved = [...this.#letters.froms()].filter((id) => this.#live.has(id));
    if (!moved.length) return;
    const buf = Buffer.from(ackLine(moved));
    await writeAll(this.#handle!, buf);
    await this.#handle!.datasync();
    this.#logBytes += buf.length;
    for (const id of moved) this.#remove(id);
  }

  /** Reads the log into memory; drops (and truncates away) a torn last line. Returns whether the log is new. */
  async #replay(): Promise<boolean> {
    let data: Buffer;
    try {
      data = await readFile(this.#logPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
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
    this.#logBytes = end;
    return false;
  }

  /** Applies one durable record to the in-memory state (at replay, and after each group commit). */
  #apply(record: SpoolRecord): void {
    switch (record.t) {
      case 'e':
        this.#add(record.id, JSON.stringify(record.event));
        break;
      case 'a':
        for (const id of record.ids) this.#remove(id);
        break;
      case 'r':
        for (const id of record.members) this.#remove(id);
        this.#add(record.id, JSON.stringify(record.event));
        break;
      case 's':
        this.#next = Math.max(this.#next, record.next);
        break;
    }
  }

  /** Adds a live entry; `line` is its `e` line when the caller has it (its size counts toward compaction). */
  #add(id: string, json: string, line = entryLine(id, json)): void {
    const bytes = Buffer.byteLength(line);
    const old = this.#live.get(id);
    if (old) this.#liveBytes -= old.bytes;
    else this.#toHand.push(id);
    this.#live.set(id, { json, bytes });
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
    if (this.#broken) throw this.#broken;
  }

  async append(events: readonly SpooledEvent[]): Promise<string[]> {
    this.#usable('append');
    return this.#appendJson(events.map((event) => JSON.stringify(event)));
  }

  /** Appends events given as JSON; resolves with their ids once synced. */
  async #appendJson(jsons: readonly string[]): Promise<string[]> {
    if (!jsons.length) return [];
    const ids: string[] = [];
    const adds: [string, string, string][] = [];
    let line = '';
    for (const json of jsons) {
      const id = String(this.#next++);
      const own = entryLine(id, json);
      ids.push(id);
      adds.push([id, json, own]);
      line += own;
    }
    await this.#commit(line, () => {
      for (const [id, json, own] of adds) this.#add(id, json, own);
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
    await this.#commit(ackLine(known), () => {
      for (const id of known) this.#remove(id);
    });
  }

  async replace(members: readonly string[], aggregate: SpooledEvent): Promise<string> {
    this.#usable('replace');
    const id = String(this.#next++);
    const json = JSON.stringify(aggregate);
    await this.#commit(replaceLine(members, id, json), () => {
      for (const member of members) this.#remove(member);
      this.#add(id, json);
    });
    return id;
  }

  async pending(ids: readonly string[]): Promise<string[]> {
    this.#usable('pending');
    return ids.filter((id) => this.#live.has(id));
  }

  /** Unacknowledged entries: right after `open()`, what earlier runs left. */
  async size(): Promise<number> {
    this.#usable('size');
    return this.#live.size;
  }

  close(): Promise<void> {
    return this.#core.close(async () => {
      // Appends already queued are written; a compaction under way finishes (or is abandoned).
      while (this.#pump || this.#compaction) await (this.#pump ?? this.#compaction?.written);
      await this.#handle?.close().catch(() => undefined);
      this.#handle = undefined;
      if (this.#lock) await releaseLock(this.#lock);
      this.#lock = undefined;
    });
  }

  /** Queues a line for the next group commit; resolves once it is synced and applied. */
  #commit(line: string, apply: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#batch.push({
        line,
        apply: () => {
          apply();
          resolve();
        },
        fail: reject,
      });
      this.#kick();
    });
  }

  #kick(): void {
    this.#pump ??= this.#run().finally(() => {
      this.#pump = undefined;
      // An op queued (or a compaction made ready) while the loop was ending.
      if (this.#batch.length || this.#compaction?.ready) this.#kick();
    });
  }

  /**
   * The writer: one at a time, each batch of waiting ops is one write and one fdatasync, and a
   * finished compaction is swapped in between two batches.
   */
  async #run(): Promise<void> {
    for (;;) {
      if (this.#compaction?.ready) await this.#swap(this.#compaction);
      const batch = this.#batch;
      if (!batch.length) return;
      this.#batch = [];
      if (this.#broken) {
        for (const op of batch) op.fail(this.#broken);
        continue;
      }
      const buf = Buffer.from(batch.map((op) => op.line).join(''));
      try {
        await writeAll(this.#handle!, buf);
        await this.#handle!.datasync();
      } catch (error) {
        // The tail of the log is unknown now (a partial line?), and after a failed fsync the
        // kernel may report the next one as fine: stop accepting rather than pretend durability.
        this.#broken = new SpoolError('io', `fileSpool: cannot write ${this.#logPath}`, { cause: error });
        for (const op of batch) op.fail(this.#broken);
        continue;
      }
      this.#logBytes += buf.length;
      if (this.#compaction) {
        this.#compaction.tail.push(buf);
        this.#compaction.tailBytes += buf.length;
      }
      for (const op of batch) op.apply();
      this.#maybeCompact();
    }
  }

  /**
   * Starts a compaction when the log is past the threshold and mostly acknowledged records. Called
   * only where the in-memory state matches the synced log (between batches, or after replay), so
   * the snapshot holds exactly the log's live entries; what is appended meanwhile is the tail,
   * copied into the new file before it replaces the log.
   *
   * Crash points (a process kill or a power loss), and why no unacknowledged entry is lost:
   * 1. While the snapshot is written to `spool.log.compact`, or after: the log has not been touched
   *    and still receives every append (synced as usual); the next `open()` deletes the partial copy.
   * 2. While the tail is copied, or the copy synced: same, the rename has not happened.
   * 3. After `rename(compact, log)`, before the directory is synced: after a power loss the name
   *    points to the old file or to the new one. Both hold every entry: the new one is the snapshot
   *    plus the tail, i.e. the old log's live state, and no batch was written in between (the swap
   *    runs in the writer, between two batches). Appends resume only after the directory sync, so
   *    no append is acknowledged in a file whose name might revert.
   * 4. After the directory sync: the new file is the log; the old one is gone with its last handle.
   */
  #maybeCompact(): void {
    if (this.#compaction || this.#broken || !this.#core.isOpen) return;
    if (this.#logBytes < this.#compactAt || this.#liveBytes * 2 > this.#logBytes) return;
    const parts = [startLine(this.#next)];
    for (const [id, live] of this.#live) parts.push(entryLine(id, live.json));
    const snapshot = Buffer.from(parts.join(''));
    const compaction: Compaction = { tail: [], tailBytes: 0 };
    this.#compaction = compaction;
    compaction.written = createSynced(join(this.#dir, COMPACT), snapshot).then((handle) => {
      if (!handle) return this.#abandon(compaction);
      compaction.ready = { handle, bytes: snapshot.length };
      this.#kick();
    });
  }

  /** Gives up a compaction (the log stays as it is, whole); the next try waits for more growth. */
  #abandon(compaction: Compaction): void {
    if (this.#compaction === compaction) this.#compaction = undefined;
    this.#compactAt = this.#logBytes + this.#compactAfter;
  }

  /** Makes a finished compaction the log: tail, sync, rename, directory sync. Runs in the writer. */
  async #swap(compaction: Compaction): Promise<void> {
    const { handle, bytes } = compaction.ready!;
    compaction.ready = undefined;
    const path = join(this.#dir, COMPACT);
    if (!(await writeSynced(handle, path, Buffer.concat(compaction.tail)))) {
      this.#abandon(compaction);
      return;
    }
    try {
      await rename(path, this.#logPath);
      await syncDir(this.#dir);
    } catch (error) {
      // The rename may or may not be durable: no append can be called durable in either file.
      this.#broken = new SpoolError('io', `fileSpool: cannot replace ${this.#logPath}`, { cause: error });
      await handle.close().catch(() => undefined);
      this.#compaction = undefined;
      return;
    }
    const old = this.#handle;
    this.#handle = handle;
    this.#logBytes = bytes + compaction.tailBytes;
    this.#compaction = undefined;
    this.#compactAt = this.#compactAfter;
    await old?.close().catch(() => undefined);
  }
}
