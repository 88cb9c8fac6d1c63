import { masked } from './url-secrets.js';

/** Where a command writes: the streams, and whether reports are JSON lines or text. */
export interface Streams {
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/**
 * What a command prints. `--json`: one JSON object per line on stdout, nothing else there. Text:
 * lines on stdout, and on a terminal a status line rewritten in place (cleared before any other
 * line). Problems go to stderr either way, prefixed with the program's name.
 */
export class Printer {
  /** Whether reports are JSON lines. */
  readonly json: boolean;
  /** Whether stdout is a terminal and text is printed: a status line can be rewritten. */
  readonly live: boolean;
  readonly #streams: Streams;
  readonly #secrets: readonly string[];
  #status = false;

  /**
   * @param json - `--json`.
   * @param streams - Default the process's.
   * @param secrets - Never printed: masked in every line (a spool URL's password, whatever quotes it).
   */
  constructor(json: boolean, streams: Streams = process, secrets: readonly string[] = []) {
    this.json = json;
    this.#secrets = secrets;
    this.#streams = streams;
    this.live = !json && (streams.stdout as { isTTY?: boolean }).isTTY === true;
  }

  /** One JSON object as one line. */
  data(value: Record<string, unknown>): void {
    this.#streams.stdout.write(`${masked(JSON.stringify(value), this.#secrets)}\n`);
  }

  /** One line of text. */
  text(line: string): void {
    this.#clear();
    this.#streams.stdout.write(`${masked(line, this.#secrets)}\n`);
  }

  /** The terminal's status line, rewritten in place; a plain line elsewhere. */
  status(line: string): void {
    if (!this.live) {
      this.text(line);
      return;
    }
    this.#streams.stdout.write(`\r\x1b[K${masked(line, this.#secrets)}`);
    this.#status = true;
  }

  /** A problem, on stderr. */
  warn(line: string): void {
    this.#clear();
    this.#streams.stderr.write(`billing-sdk: ${masked(line, this.#secrets)}\n`);
  }

  #clear(): void {
    if (!this.#status) return;
    this.#streams.stdout.write('\r\x1b[K');
    this.#status = false;
  }
}
