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
 * `work`, or a {@link StatementTimeout} once `timeoutMs` passed without its answer; `cancel` is then
 * called (best effort) so the server stops the statement rather than run it for nobody. A late
 * failure of `work` is swallowed: its caller already has its answer.
 */
export function withDeadline<T>(work: Promise<T>, timeoutMs: number, cancel?: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      try {
        cancel?.();
      } catch {
        // The timeout is the answer either way.
      }
      reject(new StatementTimeout(timeoutMs));
    }, timeoutMs);
  });
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
