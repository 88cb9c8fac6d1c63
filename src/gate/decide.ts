import type { AccessLookupOutcome } from '../access/cache.js';
import type { GateEvent } from '../core/diagnostics.js';
import {
  APIConnectionError,
  APIError,
  InvalidRequestError,
  RateLimitError,
  StoreError,
} from '../core/errors/index.js';
import type { CreditHold } from '../credits/types.js';
import { segment } from '../internal/checks.js';
import type { DebitApproved, DebitResult } from '../schemas/usage.js';
import { channel, publish } from '../util/diagnostics.js';
import { safely } from '../util/safely.js';
import { randomUUID } from '../util/uuid.js';
import { problem, redirect } from './answer.js';
import { RouteHold } from './hold.js';
import {
  claimKey,
  type Idempotency,
  KeyClaim,
  type KeyRefusal,
  refuseKey,
  replayKey,
} from './idempotency.js';
import type { PaywallLinks } from './links.js';
import { type CheckedNeeds, type NeedLookup, quantityOf } from './needs.js';
import { isNavigation } from './request.js';
import type {
  GateAllowed,
  GateDecision,
  GateDenialReason,
  GateNeed,
  GateOptions,
  GateRequest,
  GateSource,
  PaywallTarget,
} from './types.js';

/** Decisions go where the access cache's steps go (see core/diagnostics.ts). */
const accessChannel = /* @__PURE__ */ channel('billing-sdk:access');

/** How long a 503 asks the client to wait when the service named no time of its own, in seconds. */
export const DEFAULT_RETRY_AFTER_S = 5;

/** The service could not answer (down, slow, 5xx, 429): a "maybe", never a "no" nor a "yes". */
export function isUnavailable(error: unknown): boolean {
  return (
    error instanceof APIConnectionError ||
    (error instanceof APIError && (error.status === 429 || error.status >= 500))
  );
}

/** Whether the app's `account` answered a promise (or any thenable) rather than a value. */
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null | undefined)?.then === 'function';

/** Worst first: a decision is as fresh as its least fresh part. */
const RANK: Record<GateSource, number> = { fallback: 3, stale: 2, live: 1, cache: 0 };
const worse = (a: GateSource, b: GateSource): GateSource => (RANK[a] >= RANK[b] ? a : b);

/** What a refusal needs to be answered: who, why, which need, and what the service said. */
interface Refusal<Req> {
  reason: Exclude<GateDenialReason, KeyRefusal | 'idempotency_key_replayed'>;
  need?: GateNeed<Req> | undefined;
  remaining_balance?: number | undefined;
  retryAfterS?: number | undefined;
}

/** What one gate decides with: its options, and its links (shared by every route of the gate). */
export interface Decider<Req extends GateRequest> {
  options: GateOptions<Req>;
  links: PaywallLinks | undefined;
  /** Where the requests' `Idempotency-Key`s are claimed (gate/idempotency.ts). */
  keys: Idempotency<Req>;
  /** Whether a key's claim is renewed while the request is served (an adapter marks it after). */
  renewClaims: boolean;
}

/**
 * The decision for one request: who asks (checked on every request), then subscriptions and
 * entitlements from the access cache (together), then credits, debited last and only once every
 * other part held. A throw from the app's `account`, a need's quantity function or an unexpected
 * error rejects: the request is never allowed.
 */
export async function decide<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
): Promise<GateDecision> {
  const named = gate.options.account(request);
  // A name given at once is read at once; a promise of one is awaited (no turn spent on a plain value).
  const account = accountOf(isThenable(named) ? await named : named);
  if (account === undefined) return deny(gate, request, undefined, { reason: 'unauthenticated' }, needs);
  const { lookups } = needs;
  // Most routes have one lookup: asked alone, without Promise.all's extra promises and turns.
  const looked =
    lookups.length === 1
      ? [await ask(lookups[0] as NeedLookup<Req>, account)]
      : await Promise.all(lookups.map((lookup) => ask(lookup, account)));
  // A definite "no" wins over a part the service could not answer.
  const refused = looked.find((l) => l.kind === 'no');
  if (refused?.kind === 'no') return deny(gate, request, account, refused.refusal, needs);
  let source: GateSource = 'cache';
  for (const l of looked) {
    if (l.kind === 'yes') source = worse(source, l.source);
    else if (l.kind === 'unavailable') {
      if (gate.options.onUnavailable !== 'open') {
        return deny(gate, request, account, { reason: 'unavailable', retryAfterS: l.retryAfterS }, needs);
      }
      source = 'fallback';
    }
  }
  // The request's Idempotency-Key, claimed before any charge; none, no work (gate/idempotency.ts).
  const claim = needs.credits.length ? await claimKey(gate.keys, request, account, needs) : undefined;
  if (typeof claim === 'string') {
    if (claim !== 'unavailable') return refuseKey(claim, account);
    return deny(gate, request, account, { reason: 'unavailable' }, needs);
  }
  if (claim !== undefined && !(claim instanceof KeyClaim)) return replayKey(claim, account);
  let charged: Charged | undefined;
  if (needs.credits.length) {
    let outcome: Charged | Refusal<Req>;
    try {
      outcome = await chargeAll(gate, request, account, needs, claim);
    } catch (error) {
      await claim?.failed().catch(() => {});
      throw error;
    }
    if ('reason' in outcome) {
      await claim?.failed().catch(() => {}); // else it lapses after its TTL
      return deny(gate, request, account, outcome, needs);
    }
    charged = outcome;
    source = worse(source, 'live');
  }
  if (accessChannel?.hasSubscribers) {
    tell(() => ({ event: 'decision', allowed: true, source, needs: kindsOf(needs) }));
  }
  const allowed: GateAllowed = { allowed: true, account_ref_id: account, source };
  if (charged?.debit) allowed.debit = charged.debit;
  if (charged?.hold) allowed.hold = charged.hold;
  if (claim instanceof KeyClaim) {
    allowed.idempotency = claim;
    if (gate.renewClaims) claim.keep((error) => safely(() => gate.options.onError?.(error, request)));
  }
  return allowed;
}

/**
 * The account the app named, checked on every request and before any lookup (the access cache
 * would refuse a bad one too, but naming its own parameter); `undefined` for nobody.
 */
export function accountOf(given: unknown): string | undefined {
  if (given === undefined || given === null || given === '') return undefined;
  const bad = typeof given === 'string' ? segment(given) : 'must answer a string or undefined';
  if (typeof given !== 'string' || typeof bad === 'string') {
    throw new InvalidRequestError('gate', [{ field: 'account', message: String(bad) }]);
  }
  return given;
}

type Looked<Req> =
  | { kind: 'yes'; source: GateSource }
  | { kind: 'no'; refusal: Refusal<Req> }
  | { kind: 'unavailable'; retryAfterS: number | undefined };

/**
 * One access answer, and where it came from (an access cache of another making, a test double,
 * says nothing of that: its answers count as `'live'`). The service being unreachable is an outcome
 * here, not a throw.
 */
async function ask<Req extends GateRequest>(lookup: NeedLookup<Req>, account: string): Promise<Looked<Req>> {
  const outcome: AccessLookupOutcome = {};
  try {
    if (await lookup.ask(account, { outcome })) {
      return { kind: 'yes', source: outcome.source ?? 'live' };
    }
    return { kind: 'no', refusal: { reason: lookup.reason, need: lookup.need } };
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    return { kind: 'unavailable', retryAfterS: retryAfterOf(error) };
  }
}

/** One credits need's debit or reservation, as the service and the holds are asked for it. */
interface Charge {
  account_ref_id: string;
  product_code: string;
  meter_code: string;
  quantity: number;
}

/** What a route's credits needs came to: the last plain need's debit, the hold need's hold. */
interface Charged {
  debit?: DebitApproved | undefined;
  hold?: RouteHold | undefined;
}

/**
 * Charges a route's credits needs so that a "no" costs nothing. Every quantity is read first (a
 * quantity function that throws charges nothing). Without `holds` a route has one credits need
 * (checkNeeds): one debit, which happened or did not. With `holds`, every need is reserved in the
 * holds' ledger before any is debited, and a refusal gives back all that was reserved; then each
 * plain need's reservation is settled at once (so the gate never debits past what its holds
 * reserved), and the `hold: true` need's is left to the adapter.
 */
async function chargeAll<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  account: string,
  needs: CheckedNeeds<Req>,
  claim: KeyClaim | undefined,
): Promise<Charged | Refusal<Req>> {
  const list = needs.credits;
  const quantities: number[] = [];
  for (const credits of list) {
    quantities.push(await quantityOf(credits.quantity, request, 'need.credits.quantity'));
  }
  if (!gate.options.holds) {
    const outcome = await charge(gate, account, list[0]!, quantities[0]!, claim?.eventKey(0, 1));
    return 'reason' in outcome ? outcome : { debit: outcome as DebitApproved };
  }
  /** The reservations not yet settled: what a "no" or a failure gives back. */
  const open = new Set<CreditHold>();
  const held: CreditHold[] = [];
  try {
    for (const [i, credits] of list.entries()) {
      const outcome = await charge(gate, account, credits, quantities[i]!, claim?.eventKey(i, list.length));
      if ('reason' in outcome) {
        await giveBack(gate, request, open);
        return outcome;
      }
      const hold = outcome as CreditHold;
      held.push(hold);
      open.add(hold);
    }
    let debit: DebitApproved | undefined;
    for (const [i, credits] of list.entries()) {
      if (credits.hold) continue;
      const hold = held[i]!;
      // Once a settle is asked its hold cannot be released (its debit may have gone through).
      open.delete(hold);
      const outcome = await unavailableAsRefusal(() => settleAtOnce(hold, credits, quantities[i]!));
      if ('reason' in outcome) {
        await giveBack(gate, request, open);
        return outcome;
      }
      debit = outcome;
    }
    const at = list.findIndex((credits) => credits.hold);
    return at < 0 ? { debit } : { debit, hold: new RouteHold(held[at]!) };
  } catch (error) {
    // A need failed for good: what was reserved goes back.
    await giveBack(gate, request, open);
    throw error;
  }
}

/**
 * Gives back reservations on a "no" or a failure: the answer stands whatever the store says; a
 * failed release goes to `onError` (the hold then expires at its ttl, which only holds back credits).
 */
function giveBack<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  holds: Iterable<CreditHold>,
): Promise<unknown> {
  const report = (error: unknown) => safely(() => gate.options.onError?.(error, request));
  return Promise.all([...holds].map((hold) => hold.release().catch(report)));
}

/**
 * A plain credits need of a gate with holds: its reservation settled whole at once; a refusal by
 * the service (credits spent outside the holds meanwhile) is a "no" like a refused debit.
 */
async function settleAtOnce<Req>(
  hold: CreditHold,
  credits: CheckedNeeds<Req>['credits'][number],
  quantity: number,
): Promise<DebitApproved | Refusal<Req>> {
  return answerOf(await hold.settle(quantity), credits);
}

/**
 * Charges one credits need, its quantity read, under `event_key` (derived from the request's claimed
 * `Idempotency-Key`, so a client retrying never pays twice; none without one): a debit, or with the
 * gate's `holds` a reservation. Never fails open: the service or the store unreachable is a 503
 * whatever `onUnavailable` says.
 */
function charge<Req extends GateRequest>(
  gate: Decider<Req>,
  account: string,
  credits: CheckedNeeds<Req>['credits'][number],
  quantity: number,
  event_key: string | undefined,
): Promise<DebitApproved | CreditHold | Refusal<Req>> {
  const { product_code, meter_code } = credits;
  const what: Charge = { account_ref_id: account, product_code, meter_code, quantity };
  return unavailableAsRefusal<DebitApproved | CreditHold | Refusal<Req>, Req>(() =>
    gate.options.holds ? reserve(gate, what, credits, event_key) : spend(gate, what, credits, event_key),
  );
}

/** The service or the store unreachable, as a refusal (503); any other failure throws. */
async function unavailableAsRefusal<T, Req>(run: () => Promise<T>): Promise<T | Refusal<Req>> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof StoreError) && !isUnavailable(error)) throw error;
    return { reason: 'unavailable', retryAfterS: retryAfterOf(error) };
  }
}

/** Debits a credits need, under `event_key` or a new key. */
async function spend<Req extends GateRequest>(
  gate: Decider<Req>,
  what: Charge,
  credits: CheckedNeeds<Req>['credits'][number],
  event_key: string | undefined,
): Promise<DebitApproved | Refusal<Req>> {
  const { billing } = gate.options;
  const result = await billing.usage.debit({ ...what, event_key: event_key ?? randomUUID() });
  return answerOf(result, credits);
}

/** A debit's result as the gate answers it: approved, a "no", or a misconfigured route. */
function answerOf<Req>(
  result: DebitResult,
  credits: CheckedNeeds<Req>['credits'][number],
): DebitApproved | Refusal<Req> {
  if (result.approved) return result;
  if (result.error_code === 'insufficient_credits') {
    return { reason: 'insufficient_credits', need: { credits }, remaining_balance: result.remaining_balance };
  }
  // The product or meter is not a prepaid-credits one: the route is misconfigured, not the customer short.
  throw new InvalidRequestError('gate', [
    { field: 'need.credits', message: `refused by the service: ${String(result.error_code)}` },
  ]);
}

/**
 * Reserves a credits need through the gate's holds: a `hold: true` one, the most the route may
 * cost, settled (or released) by the adapter after the answer; a plain one, settled at once.
 */
async function reserve<Req extends GateRequest>(
  gate: Decider<Req>,
  what: Charge,
  credits: CheckedNeeds<Req>['credits'][number],
  event_key: string | undefined,
): Promise<CreditHold | Refusal<Req>> {
  const holds = gate.options.holds;
  if (!holds)
    throw new InvalidRequestError('gate', [{ field: 'holds', message: 'is required by need.credits.hold' }]);
  const r = await holds.reserve(event_key ? { ...what, event_key } : what);
  if (r.approved) return r.hold;
  return { reason: 'insufficient_credits', need: { credits }, remaining_balance: r.available };
}

/** The answer to a "no": the paywall for a browser, else a problem document. */
async function deny<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  account: string | undefined,
  refusal: Refusal<Req>,
  needs: CheckedNeeds<Req>,
): Promise<GateDecision> {
  const { reason } = refusal;
  tell(() => ({ event: 'decision', allowed: false, reason, needs: kindsOf(needs) }));
  const base = { allowed: false as const, reason, ...(account ? { account_ref_id: account } : {}) };
  if (reason === 'unauthenticated') {
    return {
      ...base,
      status: 401,
      response: problem(401, reason, 'The request does not say which account asks.'),
    };
  }
  if (reason === 'unavailable') {
    const seconds = refusal.retryAfterS ?? DEFAULT_RETRY_AFTER_S;
    const response = problem(
      503,
      reason,
      'Billing could not be reached; try again later.',
      {},
      {
        'retry-after': String(seconds),
      },
    );
    return { ...base, status: 503, response };
  }
  const link = account && refusal.need ? await linkFor(gate, request, account, refusal.need) : undefined;
  if (link && isNavigation(request)) return { ...base, status: 303, response: redirect(link) };
  const extra = {
    ...(link ? { upgrade_url: link } : {}),
    ...(refusal.remaining_balance !== undefined ? { remaining_balance: refusal.remaining_balance } : {}),
  };
  return {
    ...base,
    status: 402,
    response: problem(402, reason, DETAILS[reason as keyof typeof DETAILS], extra),
  };
}

const DETAILS: Record<'inactive' | 'not_entitled' | 'insufficient_credits', string> = {
  inactive: 'The account has no active subscription for this.',
  not_entitled: 'The account is not entitled to this.',
  insufficient_credits: 'The account has too few credits for this.',
};

/** The paywall link for a need: its own target (a subscription's tier), else `paywall.target`'s. */
async function linkFor<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  account: string,
  need: GateNeed<Req>,
): Promise<string | undefined> {
  const paywall = gate.options.paywall;
  if (!gate.links || !paywall) return undefined;
  let target: PaywallTarget | undefined;
  if ('subscription' in need && need.tier)
    target = { subscription_name: need.subscription, tier_name: need.tier };
  else target = (await paywall.target?.(need, request)) ?? undefined;
  if (!target) return undefined;
  const email = (await paywall.email?.(request)) ?? undefined;
  return gate.links.get(account, target, email);
}

/** The wait a 429 named, in whole seconds; `undefined` for other failures. */
export function retryAfterOf(error: unknown): number | undefined {
  if (!(error instanceof RateLimitError) || error.retryAfterMs === undefined) return undefined;
  return Math.max(1, Math.ceil(error.retryAfterMs / 1000));
}

function kindsOf<Req>(needs: CheckedNeeds<Req>): GateEvent['needs'] {
  const kinds: GateEvent['needs'] = [];
  if (needs.subscriptions.length) kinds.push('subscription');
  if (needs.entitlements.length) kinds.push('entitlement');
  if (needs.credits.length) kinds.push('credits');
  if (needs.usage.length) kinds.push('usage');
  return kinds;
}

/** Publishes a decision; `make` runs only when someone listens (an unobserved decision builds nothing). */
function tell(make: () => GateEvent): void {
  publish(accessChannel, make);
}
