import { type FileHandle, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { SpoolError } from '../core/errors/index.js';
import { letterMeta, parseLetter } from '../tracker/dead-letter-record.js';
import type { DeadLetter } from '../tracker/spool.js';
import type { DeadLetterStorage } from '../tracker/spool-core.js';
import { createSynced, syncDir, writeAll } from './fs.js';
import { decodeLines, isLetterRecord, letterLine } from './record-format.js';

const FILE = 'dead-letters.log';
const REWRITE = 'dead-letters.log.rewrite';

/** A letter as the file holds it: its line, and what it came from. */
interface Stored {
  /** The entry's id in the spool's log (acknowledged there once the letter is durable). */
  from: string;
  /** The event as the log held it (JSON). */
  json: string;
  /** Its reason, attempts and times (JSON). */
  meta: string;
}

/** A letter to add: the entry's id, its event's JSON, its {@link letterMeta}. */
export type NewLetter = Stored;

/**
 * A file spool's dead letters: `dead-letters.log` beside its log, in memory as well. A letter is
 * appended and synced before its entry is acknowledged in the log (a crash in between leaves the
 * entry in both: {@link froms} lets the next open acknowledge it); removing letters (a replay, a
 * drop) rewrites the file whole and renames it into place, so it holds only letters kept. Used
 * under the spool's lock, one step at a time.
 */
export class DeadLetterFile {
  readonly #dir: string;
  readonly #path: string;
  readonly #letters = new Map<string, Stored>();
  #next = 1;
  /** Steps one after the other: a rewrite never races an append. */
  #steps: Promise<unknown> = Promise.resolve();

  constructor(dir: string) {
    this.#dir = dir;
    this.#path = join(dir, FILE);
  }

  /** Reads the file (none yet: no letters). A torn last line (a crash mid-append) is dropped by a rewrite. */
  async load(): Promise<void> {
    this.#letters.clear();
    this.#next = 1;
    let data: Buffer;
    try {
      data = await readFile(this.#path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new SpoolError('io', `fileSpool: cannot read ${this.#path}`, { cause: error });
    }
    const { records, end } = decodeLines(data, this.#path, isLetterRecord);
    for (const record of records) {
      if (record.t === 's') this.#next = Math.max(this.#next, record.next);
      else {
        this.#letters.set(record.id, {
          from: record.from,
          json: JSON.stringify(record.event),
          meta: JSON.stringify(record.letter),
        });
        this.#next = Math.max(this.#next, Number(record.id) + 1);
      }
    }
    if (end < data.length) await this.#rewrite();
  }

  /** The log ids the letters came from. */
  froms(): Set<string> {
    return new Set([...this.#letters.values()].map((letter) => letter.from));
  }

  /** Appends letters, synced; resolves once they are durable. */
  add(letters: readonly NewLetter[]): Promise<void> {
    return this.#step(async () => {
      const added: [string, Stored][] = letters.map((letter) => [String(this.#next++), letter]);
      const lines = added.map(([id, { from, json, meta }]) => letterLine(id, from, json, meta)).join('');
      const handle = await open(this.#path, 'a');
      try {
        await writeAll(handle, Buffer.from(lines));
        await handle.datasync();
      } finally {
        await handle.close();
      }
      // The file may be new: its name must be durable too.
      await syncDir(this.#dir);
      for (const [id, letter] of added) this.#letters.set(id, letter);
    });
  }

  /** The letters, oldest first, at most `max`. */
  list(max = Number.POSITIVE_INFINITY): DeadLetter[] {
    const out: DeadLetter[] = [];
    for (const [id, { json, meta }] of this.#letters) {
      if (out.length >= max) break;
      const letter = parseLetter(id, json, meta);
      if (letter) out.push(letter);
    }
    return out;
  }

  /** The letters `ids` (or every one) held now, oldest first, with their ids. */
  chosen(ids: readonly string[] | 'all'): [string, Stored][] {
    const all = [...this.#letters];
    if (ids === 'all') return all;
    const wanted = new Set(ids);
    return all.filter(([id]) => wanted.has(id));
  }

  /** Removes letters: the file rewritten without them, durable before this resolves. */
  remove(ids: readonly string[]): Promise<void> {
    return this.#step(async () => {
      const kept = new Map(this.#letters);
      for (const id of ids) kept.delete(id);
      await this.#rewrite(kept);
      for (const id of ids) this.#letters.delete(id);
    });
  }

  /** Writes `letters` as the whole file: a new file, synced, renamed over the old one, the directory synced. */
  async #rewrite(letters: Map<string, Stored> = this.#letters): Promise<void> {
    const lines = [`{"t":"s","next":${this.#next}}\n`];
    for (const [id, { from, json, meta }] of letters) lines.push(letterLine(id, from, json, meta));
    const path = join(this.#dir, REWRITE);
    const handle: FileHandle | undefined = await createSynced(path, Buffer.from(lines.join('')));
    if (!handle) throw new SpoolError('io', `fileSpool: cannot write ${path}`);
    await handle.close();
    await rename(path, this.#path);
    await syncDir(this.#dir);
  }

  #step<T>(step: () => Promise<T>): Promise<T> {
    const result = this.#steps.then(step);
    this.#steps = result.catch(() => {});
    return result;
  }
}

/** What {@link deadLetterStorage} uses of the file spool's log. */
export interface LetterLog {
  /** A live entry's event as the log holds it (JSON); `undefined` when it is not live. */
  jsonOf(id: string): string | undefined;
  /** Appends events given as JSON; resolves with their ids once synced. */
  appendJson(jsons: readonly string[]): Promise<string[]>;
  /** Acknowledges entries in the log; resolves once synced. */
  ack(ids: readonly string[]): Promise<void>;
}

/**
 * The storage steps of a `fileSpool`'s dead letters, in `letters` beside its `log`. Every step keeps
 * an event in the log or in the letters, or briefly in both (sent again under its key, counted
 * once), never in neither: the copy being made is durable before the original is removed.
 */
export function deadLetterStorage(letters: DeadLetterFile, log: LetterLog): DeadLetterStorage {
  const isId = (id: string) => /^[1-9]\d*$/.test(id);
  return {
    isEntryId: isId,
    isLetterId: isId,
    // The letter durable first, then its entry acknowledged in the log (see DeadLetterFile).
    move: async (entries) => {
      const known = entries.filter((entry) => log.jsonOf(entry.id) !== undefined);
      if (!known.length) return;
      await letters.add(
        known.map((entry) => ({ from: entry.id, json: log.jsonOf(entry.id)!, meta: letterMeta(entry) })),
      );
      await log.ack(known.map((entry) => entry.id));
    },
    list: async (max) => letters.list(max),
    replay: async (ids) => {
      const chosen = letters.chosen(ids);
      if (!chosen.length) return [];
      // Back in the log first: a crash before the letters are removed leaves an event in both,
      // sent again under its key (counted once), never one in neither.
      await log.appendJson(chosen.map(([, letter]) => letter.json));
      const replayed = chosen.map(([id]) => id);
      await letters.remove(replayed);
      return replayed;
    },
    drop: async (ids) => {
      const dropped = letters.chosen(ids).map(([id]) => id);
      if (dropped.length) await letters.remove(dropped);
      return dropped;
    },
  };
}
