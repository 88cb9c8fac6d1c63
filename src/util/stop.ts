/**
 * A stop switch, usable from any request's context: the tracker's "close gave up", a claim's end
 * of renewals. Not an `AbortSignal`:
 * workerd binds an `AbortSignal` to the request that made it, and a tracker kept at module scope (made
 * by one request, used by every later one) would throw "Cannot perform I/O on behalf of a different
 * request" at the first look at it from a later request, silently, in a timer, and send nothing more.
 * So the switch is a plain flag, and each step that needs a signal or a promise gets one made in its
 * own context ({@link Stop.signal}, {@link Stop.race}).
 */
export class Stop {
  #aborted = false;
  readonly #listeners = new Set<() => void>();

  /** Whether close gave up: sends and waits end, nothing new starts. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Close gave up: every signal handed out aborts, every race answers `false`. */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    for (const listener of [...this.#listeners]) listener();
    this.#listeners.clear();
  }

  /**
   * Calls `listener` once this stops, as an `AbortSignal`'s `'abort'` listener is called: the SDK's
   * one sleep waits on this as on a signal (see {@link Cancellation}), without an `AbortController`
   * and its `DOMException` per wait (a webhook's claim makes one per delivery).
   */
  addEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners.add(listener);
  }

  /** Forgets a listener given to {@link addEventListener}. */
  removeEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners.delete(listener);
  }

  /** Runs `step` with an `AbortSignal` made now, in the caller's context, that aborts when this stops. */
  async signal<T>(step: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    if (this.#aborted) controller.abort();
    const abort = () => controller.abort();
    this.#listeners.add(abort);
    try {
      return await step(controller.signal);
    } finally {
      this.#listeners.delete(abort);
    }
  }

  /** `promise`'s value, or `false` once this stops, whichever comes first; made in the caller's context. */
  race<T>(promise: Promise<T>): Promise<T | false> {
    if (this.#aborted) {
      // Nobody waits for it any more: its failure (a spool that lost its server) is not unhandled.
      promise.catch(() => {});
      return Promise.resolve(false);
    }
    return new Promise<T | false>((resolve, reject) => {
      const stopped = () => resolve(false);
      this.#listeners.add(stopped);
      promise.then(
        (value) => {
          this.#listeners.delete(stopped);
          resolve(value);
        },
        (error: unknown) => {
          this.#listeners.delete(stopped);
          reject(error);
        },
      );
    });
  }
}
