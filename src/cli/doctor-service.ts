import { BillingClient } from '../client.js';
import {
  APIConnectionError,
  APIError,
  AuthenticationError,
  PermissionDeniedError,
} from '../core/errors/index.js';
import { type CheckResult, failedCheck, pass, skip } from './check.js';
import { messageOf } from './fail.js';
import { duration } from './progress.js';

/**
 * Skew past which the clock check fails. Signed links carry their expiry in the signer's time and
 * are checked in the service's: a clock this far off makes a short-lived link expire early (or
 * outlive what it was meant for).
 */
export const MAX_SKEW_MS = 30_000;

/** The clock check from a response's `Date` header, read between `sent` and `answered` (local ms). */
export function clockCheck(date: string | undefined, sent: number, answered: number): CheckResult {
  const server = date === undefined ? Number.NaN : Date.parse(date);
  if (Number.isNaN(server)) return skip('clock', 'the service sent no Date header to compare with');
  // The header has whole seconds, taken somewhere during the exchange: compare with its middle,
  // and count only what exceeds the header's own rounding.
  const local = (sent + answered) / 2;
  const raw = local - server;
  const skew = Math.abs(raw) <= 1_000 + (answered - sent) / 2 ? 0 : raw;
  const text =
    skew === 0
      ? 'in step with the service (within 1 s)'
      : `${duration(Math.abs(skew))} ${skew > 0 ? 'ahead of' : 'behind'} the service`;
  if (Math.abs(skew) <= MAX_SKEW_MS) return pass('clock', text);
  return failedCheck(
    'clock',
    `${text}: set the clock by NTP (signed links are checked against the service's time)`,
  );
}

/**
 * The checks of the service: whether `BILLING_BASE_URL` answers, whether `BILLING_API_KEY` is
 * there and accepted (one `products.list`, no retry), and the clock's skew from the answer's `Date`
 * header (an error's answer has one too). A missing key still lets the URL and clock be checked,
 * with a placeholder key the service refuses.
 */
export async function serviceChecks(): Promise<CheckResult[]> {
  const key = process.env.BILLING_API_KEY;
  const where = process.env.BILLING_BASE_URL;
  const keyMissing = failedCheck('api key', "missing: set BILLING_API_KEY to your gateway's API key");
  let billing: BillingClient;
  try {
    billing = new BillingClient({
      apiKey: key || 'billing-sdk-doctor-no-key',
      maxRetries: 0,
      timeout: 10_000,
    });
  } catch (error) {
    return [
      key ? skip('api key', 'not checked: no client') : keyMissing,
      failedCheck('base url', messageOf(error)),
      skip('clock', 'not checked: no client'),
    ];
  }
  const sent = Date.now();
  let headers: Record<string, string>;
  let keyCheck: CheckResult;
  try {
    ({
      response: { headers },
    } = await billing.products.list().withResponse());
    keyCheck = pass('api key', 'accepted');
  } catch (error) {
    if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
      // The service answered: the URL is right, and its Date header is there. A 403 is a key it
      // knows that may not read the catalog.
      headers = error.headers;
      const refused =
        error instanceof AuthenticationError
          ? 'refused with 401: check BILLING_API_KEY (a sandbox key on a live URL, or the reverse?)'
          : 'refused with 403: the key is known but may not read the catalog (check its permissions)';
      keyCheck = key ? failedCheck('api key', refused) : keyMissing;
    } else if (error instanceof APIError) {
      const hint = error.status === 404 ? ' (BILLING_BASE_URL is the API root, ending in /api/)' : '';
      return [
        key ? skip('api key', `not checked: the service answered ${error.status}`) : keyMissing,
        failedCheck('base url', `${where} answered ${error.status}${hint}`),
        clockCheck(error.headers.date, sent, Date.now()),
      ];
    } else {
      const what = error instanceof APIConnectionError ? messageOf(error) : `unexpected: ${messageOf(error)}`;
      return [
        key ? skip('api key', 'not checked: no answer') : keyMissing,
        failedCheck('base url', `no answer from ${where}: ${what}`),
        skip('clock', 'not checked: no answer'),
      ];
    }
  }
  return [keyCheck, pass('base url', `${where} answers`), clockCheck(headers.date, sent, Date.now())];
}
