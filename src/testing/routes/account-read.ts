import { notFound } from '../errors.js';
import type { MockStore } from '../store.js';
import type { FieldErrors } from '../validation.js';

/**
 * The checks every account-scoped read makes before it touches data, in the service's order: a
 * 400 listing every field problem first, then a 404 for an account the service has never seen.
 * Returns the response to send instead, or undefined when the read may go on.
 */
export function rejectRead(
  errors: FieldErrors,
  store: MockStore,
  accountRefId: string,
): Response | undefined {
  if (!errors.empty) return errors.toResponse();
  if (!store.account(accountRefId)) return notFound();
  return undefined;
}
