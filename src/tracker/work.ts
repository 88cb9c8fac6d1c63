/**
 * Counts the tracker's spool calls, sends and waits under way, so that `close` releases the spool
 * only once every one of them is done.
 */
export class Work {
  #busy = 0;
  readonly #quiet: (() => void)[] = [];

  /** One more step under way. */
  begin(): void {
    this.#busy++;
  }

  /** A step begun with {@link begin} is done. */
  end(): void {
    this.#busy--;
    if (this.#busy === 0 && this.#quiet.length) {
      // Quiet only if nothing began again by the next turn: a step whose end begins the next (a send
      // that ends and starts the next, a window that closes and writes its aggregate) is no quiet
      // moment, and in workerd a request let go then would cancel the step begun in it.
      setTimeout(() => {
        if (this.#busy === 0) for (const resolve of this.#quiet.splice(0)) resolve();
      }, 0);
    }
  }

  /** Runs `step`, counted from its call until it settles. */
  async run<T>(step: () => Promise<T>): Promise<T> {
    this.begin();
    try {
      return await step();
    } finally {
      this.end();
    }
  }

  /** Resolves once nothing is under way (at once when nothing is). */
  quiet(): Promise<void> {
    return this.#busy === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.#quiet.push(resolve));
  }
}
