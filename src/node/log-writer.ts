import { type FileHandle, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { SpoolError } from '../core/errors/index.js';
import { createSynced, syncDir, writeAll, writeSynced } from './fs.js';

/** The compacted log while it is written, beside the log; a crash can leave it (`open()` deletes it). */
export const COMPACT = 'spool.log.compact';

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

/** What {@link LogWriter} reads of the spool's in-memory state, which matches the synced log when asked. */
export interface LogState {
  /** Whether the spool is open: no compaction starts otherwise. */
  isOpen(): boolean;
  /** Bytes the live entries would take in a compacted log. */
  liveBytes(): number;
  /** The compacted log's text: its start line, then the live entries' lines. */
  snapshot(): string;
}

/**
 * A file spool's log writer: group commit (every op waiting at one moment shares one write and
 * one `fdatasync`) and compaction (past `compactAfter` bytes, when more than half of the log is
 * acknowledged records, the live entries are copied to a new file that replaces the log while
 * appends go on). Apart from the spool so that the log's durability lives in one place; the spool
 * keeps what the records mean.
 */
export class LogWriter {
  readonly #dir: string;
  readonly #path: string;
  readonly #compactAfter: number;
  readonly #state: LogState;
  #handle: FileHandle | undefined;
  /** Bytes of the log file. */
  #bytes = 0;
  /** Compaction waits until the log reaches this size (raised after a failed attempt). */
  #compactAt: number;
  #batch: Op[] = [];
  #pump: Promise<void> | undefined;
  #compaction: Compaction | undefined;
  /** Set when a write or sync failed: the log's tail is then unknown, so nothing more is accepted. */
  #broken: SpoolError | undefined;

  /**
   * @param dir - The spool's directory (the compacted log is written there).
   * @param path - The log's path.
   * @param compactAfter - Size in bytes past which the log is compacted when mostly acknowledged.
   * @param state - The spool's state, read to decide on and write a compaction.
   */
  constructor(dir: string, path: string, compactAfter: number, state: LogState) {
    this.#dir = dir;
    this.#path = path;
    this.#compactAfter = compactAfter;
    this.#compactAt = compactAfter;
    this.#state = state;
  }

  /** The failure that stopped the writer, if one did: every op is refused with it. */
  get broken(): SpoolError | undefined {
    return this.#broken;
  }

  /** Starts over, as at open: nothing written, nothing broken. */
  reset(): void {
    this.#bytes = 0;
    this.#compactAt = this.#compactAfter;
    this.#broken = undefined;
  }

  /** Appends to `handle` from now on: the log, opened for appending, `bytes` long as replayed. */
  attach(handle: FileHandle, bytes: number): void {
    this.#handle = handle;
    this.#bytes = bytes;
  }

  /** Closes the log's handle, failures ignored (nothing is left to sync). */
  async detach(): Promise<void> {
    await this.#handle?.close().catch(() => undefined);
    this.#handle = undefined;
  }

  /** Resolves once queued ops are written and a compaction under way is finished or abandoned. */
  async drain(): Promise<void> {
    while (this.#pump || this.#compaction) await (this.#pump ?? this.#compaction?.written);
  }

  /** Writes and syncs `line` at once, outside group commit: for `open()`, before any op can be queued. */
  async writeNow(line: string): Promise<void> {
    const buf = Buffer.from(line);
    await writeAll(this.#handle!, buf);
    await this.#handle!.datasync();
    this.#bytes += buf.length;
  }

  /** Queues a line for the next group commit; resolves once it is synced and applied. */
  commit(line: string, apply: () => void): Promise<void> {
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
        this.#broken = new SpoolError('io', `fileSpool: cannot write ${this.#path}`, { cause: error });
        for (const op of batch) op.fail(this.#broken);
        continue;
      }
      this.#bytes += buf.length;
      if (this.#compaction) {
        this.#compaction.tail.push(buf);
        this.#compaction.tailBytes += buf.length;
      }
      for (const op of batch) op.apply();
      this.compactIfDue();
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
  compactIfDue(): void {
    if (this.#compaction || this.#broken || !this.#state.isOpen()) return;
    if (this.#bytes < this.#compactAt || this.#state.liveBytes() * 2 > this.#bytes) return;
    const snapshot = Buffer.from(this.#state.snapshot());
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
    this.#compactAt = this.#bytes + this.#compactAfter;
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
      await rename(path, this.#path);
      await syncDir(this.#dir);
    } catch (error) {
      // The rename may or may not be durable: no append can be called durable in either file.
      this.#broken = new SpoolError('io', `fileSpool: cannot replace ${this.#path}`, { cause: error });
      await handle.close().catch(() => undefined);
      this.#compaction = undefined;
      return;
    }
    const old = this.#handle;
    this.#handle = handle;
    this.#bytes = bytes + compaction.tailBytes;
    this.#compaction = undefined;
    this.#compactAt = this.#compactAfter;
    await old?.close().catch(() => undefined);
  }
}
