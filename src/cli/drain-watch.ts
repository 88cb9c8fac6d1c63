import { AuthenticationError } from '../core/errors/index.js';
import { messageOf } from './fail.js';

/**
 * Watches a `relay --once` drain so a cron run always ends: it gives up when nothing was recorded or
 * dead-lettered for `stallMs` (the service down, a 503 on every send), or at once when the service
 * refused the API key (a 401 does not fix itself within the run). `gaveUp` resolves with why, in
 * one line naming the last error; the events stay in the spool for the next run.
 */
export class DrainWatch {
  /** Resolves with why the drain was given up; never rejects. */
  readonly gaveUp: Promise<string>;
  #giveUp: (why: string) => void = () => {};
  #lastError: unknown;
  #seen = -1;
  readonly #timer: ReturnType<typeof setInterval>;

  /**
   * @param progress - Events recorded or dead-lettered so far.
   * @param stallMs - How long the drain may go without progress.
   */
  constructor(progress: () => number, stallMs: number) {
    this.gaveUp = new Promise((resolve) => {
      this.#giveUp = resolve;
    });
    let since = performance.now();
    this.#timer = setInterval(
      () => {
        const now = progress();
        if (now !== this.#seen) {
          this.#seen = now;
          since = performance.now();
        } else if (performance.now() - since >= stallMs) {
          const last =
            this.#lastError === undefined
              ? '; no send has finished yet'
              : `; the last error: ${messageOf(this.#lastError)}`;
          this.#giveUp(`nothing was recorded for ${stallMs} ms${last}; the events stay in the spool`);
        }
      },
      Math.max(50, Math.min(1_000, Math.floor(stallMs / 4))),
    );
  }

  /** A failed send: kept as the last error; a refused API key gives up at once. */
  failed(error: unknown): void {
    this.#lastError = error;
    if (error instanceof AuthenticationError)
      this.#giveUp(
        `the service refused the API key (401: check BILLING_API_KEY): ${messageOf(error)}; the events stay in the spool`,
      );
  }

  /** Stops watching. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
