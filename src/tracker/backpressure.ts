import { UsageTrackerError } from '../core/errors/index.js';

interface Waiting {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Room for `track` calls under `maxQueued`: a call reserves its place before its append (so calls
 * under way at once cannot overshoot together) and releases it once the append settled (the event
 * is then counted as outstanding, or was never stored). Past the limit a call waits its turn, in
 * order, or is refused typed under `onFull: 'reject'`; nothing is ever dropped.
 */
export class Backpressure {
  readonly #max: number;
  readonly #onFull: 'wait' | 'reject';
  readonly #outstanding: () => number;
  /** Places granted to calls whose append has not settled yet. */
  #reserved = 0;
  readonly #waiting: Waiting[] = [];

  /**
   * @param max - `maxQueued`.
   * @param onFull - What a call past the limit does.
   * @param outstanding - Events stored and not yet recorded or dead-lettered that count against the limit.
   */
  constructor(max: number, onFull: 'wait' | 'reject', outstanding: () => number) {
    this.#max = max;
    this.#onFull = onFull;
    this.#outstanding = outstanding;
  }

  /**
   * Reserves a place: `undefined` when granted at once, else a promise that resolves once it is
   * (rejects if {@link refuseAll} comes first).
   * @throws {@link UsageTrackerError} `'full'` under `onFull: 'reject'` when there is no room.
   */
  reserve(): Promise<void> | undefined {
    if (!this.#waiting.length && this.#room()) {
      this.#reserved++;
      return undefined;
    }
    if (this.#onFull === 'reject') {
      throw new UsageTrackerError(
        'full',
        `usageTracker.track: ${this.#max} events are waiting to be sent (maxQueued); the event was not queued`,
      );
    }
    return new Promise<void>((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Gives a reserved place back: its append settled (counted as outstanding now), or it was not made. */
  release(): void {
    this.#reserved--;
    this.grant();
  }

  /** Lets waiting calls in, in order, while there is room; each takes its place at once. */
  grant(): void {
    while (this.#waiting.length && this.#room()) {
      this.#reserved++;
      this.#waiting.shift()?.resolve();
    }
  }

  /** Rejects every call still waiting for room with `error()` (the tracker is closing). */
  refuseAll(error: () => Error): void {
    for (const waiting of this.#waiting.splice(0)) waiting.reject(error());
  }

  #room(): boolean {
    return this.#outstanding() + this.#reserved < this.#max;
  }
}
