import { isUnavailable } from './unavailable.js';

/**
 * SQLSTATE classes of a step that may well succeed when tried again: a transaction rolled back by
 * the server (40: serialization failure, deadlock), insufficient resources (53), operator
 * intervention (57: a cancelled statement, a server shutting down), a lock not available (55P03).
 */
const TRANSIENT_SQLSTATE = /^(40|53|57)|^55P03$/;

/**
 * Whether a Postgres failure may pass when the step is tried again: the server cannot be reached
 * or the connection broke ({@link isUnavailable}), or it answered one of the SQLSTATEs above. The
 * one classifier of `billing-sdk/postgres`: a spool's `'unavailable'` (else `'io'`) and a store's
 * `'unavailable'` (else `'unexpected_reply'`) are both this.
 */
export function isTransient(error: unknown): boolean {
  if (isUnavailable(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_SQLSTATE.test(code);
}
