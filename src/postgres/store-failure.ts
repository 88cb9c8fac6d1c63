import { StoreError } from '../core/errors/index.js';
import { isUnavailable } from './driver.js';

/**
 * SQLSTATE classes of a step that may well succeed when tried again: a transaction rolled back by
 * the server (40: serialization failure, deadlock), insufficient resources (53), operator
 * intervention (57: a cancelled statement, a server shutting down), a lock not available (55P03).
 */
const TRANSIENT = /^(40|53|57)|^55P03$/;

/**
 * What a `postgresDedupeStore` method rejects with when the database failed: a {@link StoreError}
 * naming the step (`where`), the driver's error as its `cause`. `'unavailable'` when the server
 * cannot be reached or cannot serve now, `'unexpected_reply'` when it refused the statement for
 * good (a table of that name with other columns, a missing privilege).
 */
export function storeFailure(where: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (isUnavailable(error) || (typeof code === 'string' && TRANSIENT.test(code))) {
    return new StoreError('unavailable', `${where}: Postgres failed: ${message}`, { cause: error });
  }
  return new StoreError('unexpected_reply', `${where}: Postgres answered an error: ${message}`, {
    cause: error,
  });
}
