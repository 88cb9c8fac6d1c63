import { SpoolError } from '../core/errors/index.js';
import type { SpooledEvent } from '../tracker/spool.js';

/**
 * One record of a file spool's log: one JSON object per line, `\n`-terminated.
 * - `{"t":"e","id","at","event"}`: an event appended (`at`: when, in ms since the epoch);
 * - `{"t":"a","ids"}`: entries acknowledged;
 * - `{"t":"r","members","id","at","event"}`: an aggregate appended and its members acknowledged, in
 *   one line so that a crash leaves either all of it or none (`at`: its oldest member's time);
 * - `{"t":"s","next"}`: first line of a compacted log, the next id to give (ids are never reused).
 *
 * Events are written as the JSON the spool already holds (`json` below), never serialised twice.
 * `at` is missing from logs written before it was recorded: those entries' age is unknown.
 */
export type SpoolRecord =
  | { t: 'e'; id: string; at?: number; event: SpooledEvent }
  | { t: 'a'; ids: string[] }
  | { t: 'r'; members: string[]; id: string; at?: number; event: SpooledEvent }
  | { t: 's'; next: number };

/** The line of an event appended at `at` (ms since the epoch; `undefined`: unknown), `json` its event as JSON. */
export const entryLine = (id: string, json: string, at: number | undefined): string =>
  `{"t":"e","id":${JSON.stringify(id)}${atField(at)},"event":${json}}\n`;

/** The `at` member of a line, left out when the time is unknown (an entry of an older log). */
const atField = (at: number | undefined): string => (at === undefined ? '' : `,"at":${at}`);

/** The line acknowledging `ids`. */
export const ackLine = (ids: readonly string[]): string => `${JSON.stringify({ t: 'a', ids })}\n`;

/**
 * The line putting the aggregate `id` (`json`: its event as JSON) in place of `members`; `at` is
 * the oldest member's time, so that aggregating never makes a backlog look younger.
 */
export const replaceLine = (
  members: readonly string[],
  id: string,
  json: string,
  at: number | undefined,
): string =>
  `{"t":"r","members":${JSON.stringify(members)},"id":${JSON.stringify(id)}${atField(at)},"event":${json}}\n`;

/** The first line of a compacted log: the next id to give. */
export const startLine = (next: number): string => `{"t":"s","next":${next}}\n`;

/**
 * Reads a log: its records, and where its whole lines end. Every record ends with `\n` and the log
 * only grows at its end, so a crash leaves a prefix of what was written: whole lines, then at most
 * one line cut short (without its `\n`), which is left out (`end < data.length` then).
 *
 * @throws {@link SpoolError} `'corrupt'` for a whole line that is not a record.
 */
export function decodeLog(data: Buffer, path: string): { records: SpoolRecord[]; end: number } {
  return decodeLines(data, path, isRecord);
}

/**
 * {@link decodeLog} for any log of JSON lines written the same way (the dead-letter file too):
 * `is` tells a record of that log.
 */
export function decodeLines<R>(
  data: Buffer,
  path: string,
  is: (v: unknown) => v is R,
): { records: R[]; end: number } {
  const end = data.lastIndexOf(0x0a) + 1;
  const lines = data.toString('utf8', 0, end).split('\n');
  lines.pop(); // '' after the last \n
  return { records: lines.map((line, i) => decodeRecord(line, i + 1, path, is)), end };
}

/** Parses and checks one line of a log; anything unexpected is a `'corrupt'` SpoolError. */
function decodeRecord<R>(line: string, lineNumber: number, path: string, is: (v: unknown) => v is R): R {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    record = undefined;
  }
  if (is(record)) return record;
  throw new SpoolError(
    'corrupt',
    `fileSpool: ${path} line ${lineNumber} is not a spool record: ${JSON.stringify(line.slice(0, 80))} (a crash only ever tears the last line; this file was changed by something else)`,
  );
}

/**
 * One record of a file spool's dead-letter file (`dead-letters.log`, beside the log), one JSON
 * object per line:
 * - `{"t":"d","id","from","event","letter"}`: a letter (`from`: the entry's id in the log, which
 *   the move acknowledges next; `letter`: its reason, attempts and times);
 * - `{"t":"s","next"}`: first line of a rewritten file, the next letter id to give.
 */
export type LetterRecord =
  | { t: 'd'; id: string; from: string; event: SpooledEvent; letter: unknown }
  | { t: 's'; next: number };

/** The line of a letter (`json`: its event as the log held it; `meta`: its reason, attempts and times as JSON). */
export const letterLine = (id: string, from: string, json: string, meta: string): string =>
  `{"t":"d","id":${JSON.stringify(id)},"from":${JSON.stringify(from)},"event":${json},"letter":${meta}}\n`;

/** Whether `v` is a record of the dead-letter file. */
export function isLetterRecord(v: unknown): v is LetterRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  if (r.t === 's') return isNext(r.next);
  return r.t === 'd' && isId(r.id) && isId(r.from) && isEvent(r.event) && typeof r.letter === 'object';
}

const isNext = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

const isId = (v: unknown): v is string => typeof v === 'string' && /^[1-9]\d*$/.test(v);
const isIds = (v: unknown): v is string[] => Array.isArray(v) && v.every(isId);
const isAt = (v: unknown): boolean =>
  v === undefined || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
const isEvent = (v: unknown): v is SpooledEvent =>
  typeof v === 'object' && v !== null && typeof (v as { event_key?: unknown }).event_key === 'string';

function isRecord(v: unknown): v is SpoolRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  switch (r.t) {
    case 'e':
      return isId(r.id) && isAt(r.at) && isEvent(r.event);
    case 'a':
      return isIds(r.ids);
    case 'r':
      return isIds(r.members) && isId(r.id) && isAt(r.at) && isEvent(r.event);
    case 's':
      return isNext(r.next);
    default:
      return false;
  }
}
