import { StoreError } from '../core/errors/index.js';
import { isTransient } from './failure.js';

/**
 * What a `postgresDedupeStore` method rejects with when the database failed: a {@link StoreError}
 * naming the step (`where`), the driver's error as its `cause`. `'unavailable'` when the failure
 * may pass ({@link isTransient}), `'unexpected_reply'` when the server refused the statement for
 * good (a table of that name with other columns, a missing privilege).
 */
export function storeFailure(where: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isTransient(error)) {
    return new StoreError('unavailable', `${where}: Postgres failed: ${message}`, { cause: error });
  }
  return new StoreError('unexpected_reply', `${where}: Postgres answered an error: ${message}`, {
    cause: error,
  });
}
