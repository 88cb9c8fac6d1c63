import type { GateDenialReason } from './types.js';

/** Why a request was refused: a gate's reasons, and a state endpoint's stream limit. */
type ProblemReason = GateDenialReason | 'too_many_streams';

const TITLES: Record<ProblemReason, string> = {
  unauthenticated: 'Authentication required',
  inactive: 'Subscription required',
  not_entitled: 'Entitlement required',
  insufficient_credits: 'Insufficient credits',
  unavailable: 'Billing unavailable',
  idempotency_key_invalid: 'Invalid Idempotency-Key',
  idempotency_key_in_flight: 'Idempotency-Key in use',
  idempotency_key_used: 'Idempotency-Key already used',
  idempotency_key_mismatch: 'Idempotency-Key reused with another request',
  idempotency_key_replayed: 'Idempotency-Key replayed',
  too_many_streams: 'Too many open streams',
};

/** Denials are per account and per moment: no cache may keep them. */
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * An RFC 9457 problem: `type` names the reason (a URN, so it never looks like a page to fetch),
 * `reason` repeats it for clients that switch on a plain string, and `extra` adds `upgrade_url`,
 * `remaining_balance` when known.
 */
export function problem(
  status: number,
  reason: ProblemReason,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Response {
  const body = {
    type: `urn:billing-sdk:problem:${reason}`,
    title: TITLES[reason],
    status,
    detail,
    reason,
    ...extra,
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json', ...NO_STORE, ...headers },
  });
}

/** `303 See Other` to the paywall: the browser follows it with a GET whatever the first method was. */
export function redirect(url: string): Response {
  return new Response(null, { status: 303, headers: { location: url, ...NO_STORE } });
}
