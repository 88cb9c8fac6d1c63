import { InvalidRequestError } from '../core/errors/index.js';
import { checkOptions, func, type Rule } from '../internal/checks.js';
import type { TrackOptions } from './types.js';

/**
 * `options.transaction` must be the caller's open transaction: an object or a function (postgres.js's
 * `tx` is one). Anything else present (`0`, `false`, a string) was meant as something, never as
 * "no transaction": refused, not read as absent, or the event would be stored outside the
 * caller's transaction (billed for an order rolled back).
 */
const transactionRule: Rule = (v) =>
  typeof v === 'object' || typeof v === 'function' ? undefined : transactionMessage(`a ${typeof v}`);

/** `track`'s options, as checkOptions reads them: made once, not on every call. */
const TRACK_OPTIONS = { transaction: [transactionRule], waitUntil: [func] };

function transactionMessage(got: string): string {
  return `must be your open database transaction (got ${got}); leave it out to track outside one. Nothing was queued`;
}

function notATransaction(got: string): InvalidRequestError {
  return new InvalidRequestError('usageTracker.track', [
    { field: 'options.transaction', message: transactionMessage(got) },
  ]);
}

/**
 * `track`'s options, checked before anything is stored.
 *
 * @throws {@link InvalidRequestError} naming `options.transaction` or `options.waitUntil`.
 */
export function checkTrackOptions(options: TrackOptions | undefined): TrackOptions {
  const checked = checkOptions('usageTracker.track', options, TRACK_OPTIONS) as TrackOptions;
  // check() reads null as "not given": a transaction given as null would be written outside it.
  if ((options as TrackOptions | undefined)?.transaction === null) throw notATransaction('null');
  return checked;
}
