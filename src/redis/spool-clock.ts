import { APPEND, REPLACE } from './lua/spool.js';
import type { SpoolStream } from './spool-stream.js';

/**
 * Redis's clock as this host sees it: Redis's time minus `performance.now()`, from the answer that
 * came back fastest lately. The deadline of an append or a replace is set in Redis's clock, which
 * may differ from this host's.
 */
export class RedisClock {
  #offset: number | undefined;
  #bestRtt = Number.POSITIVE_INFINITY;
  #sampledAt = Number.NEGATIVE_INFINITY;
  /** How long before its timeout a write must have run in Redis: time for the answer to come back. */
  readonly #margin: number;

  constructor(readonly timeoutMs: number) {
    this.#margin = Math.min(timeoutMs / 2, 500);
  }

  /**
   * Learns from a reply that carried Redis's time (`redisNow`, ms) to a script sent at `sent`
   * (`performance.now()`). A faster round trip gives a better estimate; after 10 s any will do
   * (the clocks drift), and `force` takes this one whatever.
   */
  sample(sent: number, redisNow: unknown, force = false): void {
    const received = performance.now();
    const rtt = received - sent;
    if (typeof redisNow !== 'number' || !Number.isFinite(redisNow)) return;
    if (force || rtt <= this.#bestRtt || received - this.#sampledAt > 10_000) {
      this.#offset = redisNow - (sent + received) / 2;
      this.#bestRtt = rtt;
      this.#sampledAt = received;
    }
  }

  /** The deadline in Redis's clock of a script sent at `sent`; 0 (none) until a reply was sampled. */
  deadline(sent: number): number {
    return this.#offset === undefined ? 0 : Math.floor(sent + this.#offset + this.timeoutMs - this.#margin);
  }

  /** Whether a reply to a script sent at `sent` came back in good time. */
  quick(sent: number): boolean {
    return performance.now() - sent < this.timeoutMs - this.#margin;
  }
}

/**
 * Runs a deadline-carrying script (APPEND or REPLACE) and answers its array reply, never `late`.
 * A `late` answer that came back in good time proves the clock estimate wrong, not Redis slow:
 * resample and try once more. Rejects with a plain `Error` (the spool types it) otherwise.
 */
export async function writeBeforeDeadline(
  spool: SpoolStream,
  clock: RedisClock,
  operation: 'append' | 'replace',
  args: string[],
): Promise<unknown[]> {
  for (let attempt = 0; ; attempt++) {
    const sent = performance.now();
    const reply = await spool.run(operation === 'append' ? APPEND : REPLACE, [clock.deadline(sent), ...args]);
    if (!Array.isArray(reply)) throw new Error(`unexpected Redis reply: ${JSON.stringify(reply)}`);
    const quick = clock.quick(sent);
    clock.sample(sent, reply[1], reply[0] === 'late' && quick);
    if (reply[0] !== 'late') return reply;
    if (!quick || attempt > 0)
      throw new Error(
        `Redis ran the ${operation} after its deadline (${spool.timeoutMs} ms): nothing was written`,
      );
  }
}
