import { StoreError } from '../core/errors/index.js';
import { withDeadline } from '../util/deadline.js';
import { unref } from '../util/timers.js';
import type { CommandRunner } from './adapt.js';
import { replyCode } from './failure.js';

/**
 * Runs a Lua script: each script is one atomic step in Redis, whatever other processes send
 * meanwhile. EVAL rather than EVALSHA: Redis caches the compiled script either way, and the few
 * hundred bytes resent per call buy not having to handle NOSCRIPT after a restart or failover.
 * On a cluster the script goes to the master serving its first key's slot: every key of a script
 * shares one hash tag (keys.ts), so that is where all of them are.
 *
 * A step Redis refused without running it ({@link REFUSED}) is sent again within `timeoutMs`:
 * failing it at once would send the caller on without the store (an access lookup to the service
 * on its own, past the lease every other instance waits on) for a refusal that lasts a moment.
 * Rejects with the client's own error, or a {@link StoreError} `'unavailable'` after `timeoutMs`:
 * each helper turns either into the error its users meet.
 */
export function evalScript(
  runner: CommandRunner,
  script: string,
  keys: string[],
  args: (string | number)[],
  timeoutMs: number,
): Promise<unknown> {
  const command = ['EVAL', script, String(keys.length), ...keys, ...args.map(String)];
  const deadline = Date.now() + timeoutMs;
  const attempt = (n: number): Promise<unknown> =>
    runner.send(command, keys[0] ?? '').catch((error: unknown) => {
      const delay = resendDelay(error, n, deadline - Date.now());
      if (delay === undefined) throw error;
      return new Promise((resolve) => unref(setTimeout(resolve, delay))).then(() => attempt(n + 1));
    });
  return withTimeout(attempt(0), timeoutMs);
}

/**
 * Error replies of a step Redis refused before running any of it, and may take in a moment: a
 * script running long, a data set loading, a cluster settling (slots moving or not yet served), a
 * replica cut off from its master. Sending the same step again is always safe.
 */
const REFUSED = new Set(['BUSY', 'LOADING', 'TRYAGAIN', 'CLUSTERDOWN', 'MASTERDOWN']);

/**
 * How long to wait before sending a step again after `error` on its `attempt`th try (0 first):
 * 10, 20, 40, then every 50 ms; `undefined` when it must not be sent again: the error is no
 * refusal ({@link REFUSED}), or no more than that wait is left of the step's time (`leftMs`).
 */
export function resendDelay(error: unknown, attempt: number, leftMs: number): number | undefined {
  if (!REFUSED.has(replyCode(error) ?? '')) return undefined;
  const delay = Math.min(50, 10 * 2 ** attempt);
  return delay < leftMs ? delay : undefined;
}

/**
 * `promise`, or a {@link StoreError} `'unavailable'` once `ms` passed. node-redis queues commands
 * while it reconnects, so without a limit a Redis outage would hang every caller instead of failing it.
 */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withDeadline(
    promise,
    ms,
    () => new StoreError('unavailable', `Redis did not answer within ${ms} ms`),
  );
}

/** A TTL as Redis's PX wants it: a whole number of ms, at least 1. */
export function px(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}

/** A reply string as node-redis gives it, or as a Buffer for a client set to return buffers; else `undefined`. */
export function replyText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return undefined;
}

/** The rule of an option a timer waits on, in ms (one rule for the whole SDK: internal/duration.ts). */
export { timerMs } from '../internal/duration.js';
