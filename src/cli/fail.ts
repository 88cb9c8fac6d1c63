/**
 * A failure the CLI reports in one line and exits with: 2 for a usage error or a spool out of
 * reach (nothing was done), 1 for a run that did not do all it should. Never an SDK error: those
 * are the library's, this is how the command line shows one.
 */
export class CliFailure extends Error {
  /** The process's exit code. */
  readonly exitCode: 1 | 2;

  /**
   * @param message - One line, without the program's name.
   * @param exitCode - 2 (default): bad usage or unreachable; 1: the run fell short.
   */
  constructor(message: string, exitCode: 1 | 2 = 2) {
    super(message);
    this.name = 'CliFailure';
    this.exitCode = exitCode;
  }
}

/** An error's message on one line (a driver's may span several). */
export const messageOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
