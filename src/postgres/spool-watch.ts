import { unref } from '../util/timers.js';
import type { Db } from './driver.js';

/** The longest wait between two attempts to listen again after the LISTEN connection was lost, in ms. */
const RELISTEN_MAX_MS = 1_000;

/**
 * What wakes the relays of one spool: a NOTIFY on its channel (sent by every insert, delivered at
 * commit), on one dedicated LISTEN connection, and a poll every `pollMs` in case notifications were
 * lost (a dropped connection, a notification queue that overflowed). A lost LISTEN connection is
 * opened again (every second at most, until it works); once it listens again the watchers are woken,
 * since what was committed meanwhile was never notified to it. Its timers never keep the process alive.
 */
export class Watcher {
  readonly #watchers = new Set<() => void>();
  #stopListening: (() => Promise<void>) | undefined;
  #pollTimer: ReturnType<typeof setInterval> | undefined;
  #relistenTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(
    private readonly db: Db,
    private readonly channel: string,
    private readonly pollMs: number,
  ) {}

  /** Listens (rejects with the driver's error when it cannot), and starts the poll. */
  async start(): Promise<void> {
    this.#closed = false; // a spool closed may be opened again
    await this.#listen();
    this.#pollTimer = unref(setInterval(() => this.#wake(), this.pollMs));
  }

  /** Adds a watcher; returns the function that removes it. */
  watch(wake: () => void): () => void {
    this.#watchers.add(wake);
    return () => this.#watchers.delete(wake);
  }

  /** Stops the poll and the LISTEN connection; never rejects. */
  async stop(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#pollTimer);
    clearTimeout(this.#relistenTimer);
    this.#watchers.clear();
    const stop = this.#stopListening;
    this.#stopListening = undefined;
    await stop?.().catch(() => {});
  }

  #wake(): void {
    for (const wake of this.#watchers) {
      try {
        wake();
      } catch {
        // A watcher's failure is its own: the others are woken all the same.
      }
    }
  }

  async #listen(): Promise<void> {
    this.#stopListening = await this.db.listen(
      this.channel,
      () => this.#wake(),
      () => this.#lost(),
    );
    // stop() ran while the connection opened: it must not stay open.
    if (this.#closed) await this.stop();
  }

  /**
   * Nobody is told: while Postgres is down the spool's own steps fail, typed, and the tracker reports
   * those; the poll goes on meanwhile.
   */
  #lost(): void {
    this.#stopListening = undefined;
    if (this.#closed) return;
    this.#relisten(Math.min(this.pollMs, RELISTEN_MAX_MS));
  }

  #relisten(delayMs: number): void {
    this.#relistenTimer = unref(
      setTimeout(() => {
        if (this.#closed) return;
        this.#listen().then(
          () => this.#wake(),
          () => {
            this.#relisten(delayMs);
          },
        );
      }, delayMs),
    );
  }
}
