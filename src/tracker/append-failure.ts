import { InvalidRequestError, SpoolError } from '../core/errors/index.js';

/**
 * Spool failures after which an append may have stored its events all the same: a reply that came
 * too late or was lost (`'unavailable'`: Redis answering after `timeoutMs`, a PostgreSQL commit
 * whose answer never came), a write whose sync failed (`'io'`), a write replicas did not confirm
 * (`'not_replicated'`). The others (`'closed'`, `'locked'`, `'corrupt'`, `'conflict'`) and a
 * refusal of the event ({@link InvalidRequestError}) come before anything is written.
 */
const MAYBE_STORED = new Set<string>(['unavailable', 'io', 'not_replicated']);

/**
 * What `track` rejects with when appending the event under `eventKey` failed with `error`. When
 * the event may have been stored, a {@link SpoolError} (the spool's code, `'unavailable'` for an
 * error of another kind) that says so (`outcome: 'unknown'`) and carries `eventKey`: the event may
 * still be sent, so the caller's only safe retry is under that key, which the service records
 * once. Otherwise `error` as it is.
 */
export function appendFailure(error: unknown, eventKey: string): unknown {
  if (error instanceof InvalidRequestError) return error;
  if (error instanceof SpoolError && !MAYBE_STORED.has(error.code)) return error;
  const code = error instanceof SpoolError ? error.code : 'unavailable';
  const message = error instanceof Error ? error.message : String(error);
  return new SpoolError(
    code,
    `${message}; the event may have been stored all the same (outcome unknown): track it again with event_key ${JSON.stringify(eventKey)} and it is recorded once`,
    {
      cause: error instanceof SpoolError && error.cause !== undefined ? error.cause : error,
      outcome: 'unknown',
      eventKey,
    },
  );
}
