import { StoreError } from '../core/errors/index.js';
import type { CommandRunner } from './adapt.js';

/**
 * Runs a Lua script: each script is one atomic step in Redis, whatever other processes send
 * meanwhile. EVAL rather than EVALSHA: Redis caches the compiled script either way, and the few
 * hundred bytes resent per call buy not having to handle NOSCRIPT after a restart or failover.
 * On a cluster the script goes to the master serving its first key's slot: every key of a script
 * shares one hash tag (keys.ts), so that is where all of them are.
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
  return withTimeout(runner.send(command, keys[0] ?? ''), timeoutMs);
}

/**
 * `promise`, or a {@link StoreError} `'unavailable'` once `ms` passed. node-redis queues commands
 * while it reconnects, so without a limit a Redis outage would hang every caller instead of failing it.
 */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreError('unavailable', `Redis did not answer within ${ms} ms`)),
      ms,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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
