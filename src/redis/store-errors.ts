import { StoreError } from '../core/errors/index.js';
import { isTransient } from './failure.js';

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
  if (!isTransient(error)) {
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
