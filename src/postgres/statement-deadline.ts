import { withDeadline as deadline } from '../util/deadline.js';

/**
 * The failure of a statement Postgres did not answer within its bound. Its `code` is SQLSTATE
 * `57014` (query_canceled), so `isTransient` classes it as a step that may pass when tried again:
 * a table locked by a migration, a server that stopped answering, a dead TCP connection.
 */
export class StatementTimeout extends Error {
  /** SQLSTATE query_canceled. */
  readonly code = '57014';

  constructor(timeoutMs: number) {
    super(`Postgres did not answer within ${timeoutMs} ms; the statement was cancelled`);
    this.name = 'StatementTimeout';
  }
}

/**
 * `work`, or a {@link StatementTimeout} once `timeoutMs` passed without its answer (the SDK's one
 * deadline, util/deadline.ts); `cancel` is then called (best effort) so the server stops the
 * statement rather than run it for nobody. A late failure of `work` is swallowed: its caller
 * already has its answer, as is a failure of `cancel` (a promise that rejects included).
 */
export function withDeadline<T>(work: Promise<T>, timeoutMs: number, cancel?: () => unknown): Promise<T> {
  return deadline(work, timeoutMs, () => {
    try {
      // postgres.js's cancel answers a promise, which rejects when its connection is reset
      // (Postgres closes it once it read the request): handled here, never left unhandled.
      const cancelled = cancel?.();
      if (typeof (cancelled as PromiseLike<unknown> | undefined)?.then === 'function') {
        (cancelled as PromiseLike<unknown>).then(undefined, () => {});
      }
    } catch {
      // The timeout is the answer either way.
    }
    return new StatementTimeout(timeoutMs);
  });
}
