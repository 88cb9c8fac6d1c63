import { APIUserAbortError, InvalidRequestError } from '../core/errors/index.js';

/** A lookup after `close()`: a typed error, never a hang or a bare Error. */
export function closedError(operation: string): InvalidRequestError {
  return new InvalidRequestError(operation, [{ field: 'access', message: 'is closed' }]);
}

/** A lookup's abort, as the client's own: made only when a signal did abort. */
export const abortedError = (operation: string, signal: AbortSignal): APIUserAbortError =>
  new APIUserAbortError(contextOf(operation), { cause: signal.reason });

/** What an aborted lookup names: the cache's operation, not the request it may share. */
function contextOf(operation: string): { operation: string; method: string; path: string } {
  return { operation, method: 'GET', path: '(access cache)' };
}
