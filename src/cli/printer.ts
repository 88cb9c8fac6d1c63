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
  #status = false;

  /**
   * @param json - `--json`.
   * @param streams - Default the process's.
   */
  constructor(json: boolean, streams: Streams = process) {
    this.json = json;
    this.#streams = streams;
    this.live = !json && (streams.stdout as { isTTY?: boolean }).isTTY === true;
  }

  /** One JSON object as one line. */
  data(value: Record<string, unknown>): void {
    this.#streams.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** One line of text. */
  text(line: string): void {
    this.#clear();
    this.#streams.stdout.write(`${line}\n`);
  }

  /** The terminal's status line, rewritten in place; a plain line elsewhere. */
  status(line: string): void {
    if (!this.live) {
      this.text(line);
      return;
    }
    this.#streams.stdout.write(`\r\x1b[K${line}`);
    this.#status = true;
  }

  /** A problem, on stderr. */
  warn(line: string): void {
    this.#clear();
    this.#streams.stderr.write(`billing-sdk: ${line}\n`);
  }

  #clear(): void {
    if (!this.#status) return;
    this.#streams.stdout.write('\r\x1b[K');
    this.#status = false;
  }
}
