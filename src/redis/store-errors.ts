import { StoreError } from '../core/errors/index.js';

/**
 * Error replies that say Redis cannot serve the step right now, not that the step is wrong: still
 * loading its data set, busy with a script, a replica written to or cut off from its master (a
 * failover under way), a cluster without a slot's node, out of memory.
 */
const TRANSIENT = new Set([
  'LOADING',
  'BUSY',
  'MASTERDOWN',
  'READONLY',
  'NOREPLICAS',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'OOM',
]);

/**
 * The code of a Redis error reply (`WRONGTYPE`, `ERR`, `NOSCRIPT`…), read from the message the way
 * every client passes it on (node-redis's `ErrorReply`, ioredis's `ReplyError`), or `undefined`
 * when `error` is no reply: a socket error, a closed client, a timeout. Node's socket errors
 * (`syscall` set) are never replies, whatever their message.
 */
function replyCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || 'syscall' in error) return undefined;
  return /^([A-Z][A-Z_-]*[A-Z]) /.exec(error.message)?.[1];
}

/**
 * What a store method rejects with (and a store tells `onError`) when Redis failed: a
 * {@link StoreError} naming the step (`where`, e.g. `redisAccessStore.read`), the client's own
 * error as its `cause`, so callers meet one error family whichever Redis client is passed in.
 * `'unexpected_reply'` when Redis refused the script for good (a key of another type under the
 * prefix, a command the server lacks), `'unavailable'` otherwise (no answer in time, a lost
 * connection, a server loading or failing over).
 */
export function storeFailure(where: string, error: unknown): StoreError {
  const message = error instanceof Error ? error.message : String(error);
  const code = replyCode(error);
  if (code !== undefined && !TRANSIENT.has(code)) {
    return new StoreError('unexpected_reply', `${where}: Redis answered an error: ${message}`, {
      cause: error,
    });
  }
  return new StoreError('unavailable', `${where}: Redis failed: ${message}`, { cause: error });
}

/** The {@link StoreError} of a reply of a shape the step never gives (another program's key, an odd adapter). */
export function unexpectedReply(where: string, reply: unknown): StoreError {
  return new StoreError('unexpected_reply', `${where}: unexpected Redis reply ${describe(reply)}`);
}

/** A reply as JSON, cut short (a huge or circular one must not make the error itself fail). */
function describe(reply: unknown): string {
  try {
    return String(JSON.stringify(reply)).slice(0, 200);
  } catch {
    return Object.prototype.toString.call(reply);
  }
}
