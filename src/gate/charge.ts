import { InvalidRequestError, StoreError } from '../core/errors/index.js';
import type { CreditHold } from '../credits/types.js';
import type { DebitApproved, DebitResult } from '../schemas/usage.js';
import { safely } from '../util/safely.js';
import { randomUUID } from '../util/uuid.js';
import type { Decider } from './decider.js';
import { RouteHold } from './hold.js';
import { claimKey, KeyClaim, type KeyRefusal, refuseKey, replayKey } from './idempotency.js';
import { type CheckedNeeds, quantityOf } from './needs.js';
import type { GateDecision, GateDenialReason, GateNeed, GateRequest } from './types.js';
import { isUnavailable, retryAfterOf } from './unavailable.js';

/** What a refusal needs to be answered: who, why, which need, and what the service said. */
export interface Refusal<Req> {
  reason: Exclude<GateDenialReason, KeyRefusal | 'idempotency_key_replayed'>;
  need?: GateNeed<Req> | undefined;
  remaining_balance?: number | undefined;
  retryAfterS?: number | undefined;
}

/** What a route's credits needs came to: the last plain need's debit, the hold need's hold. */
export interface Charged {
  debit?: DebitApproved | undefined;
  hold?: RouteHold | undefined;
}

/**
 * What the credits part of a decision came to: charged (under the request's claimed
 * `Idempotency-Key`, if any), a refusal to answer, or an answer of the key's own (a replay, a key
 * in use or reused).
 */
export type CreditsOutcome<Req> =
  | { kind: 'charged'; charged: Charged; claim: KeyClaim | undefined }
  | { kind: 'refused'; refusal: Refusal<Req> }
  | { kind: 'answered'; decision: GateDecision };

/**
 * The credits part of a decision, asked once every other part held: the request's
 * `Idempotency-Key` claimed before any charge (gate/idempotency.ts), then every credits need
 * charged; a "no" or a failure gives the claim back (else it lapses after its TTL).
 */
export async function chargeCredits<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  account: string,
  needs: CheckedNeeds<Req>,
): Promise<CreditsOutcome<Req>> {
  const claim = await claimKey(gate.keys, request, account, needs);
  if (typeof claim === 'string') {
    if (claim !== 'unavailable') return { kind: 'answered', decision: refuseKey(claim, account) };
    return { kind: 'refused', refusal: { reason: 'unavailable' } };
  }
  if (claim !== undefined && !(claim instanceof KeyClaim))
    return { kind: 'answered', decision: replayKey(claim, account) };
  let outcome: Charged | Refusal<Req>;
  try {
    outcome = await chargeAll(gate, request, account, needs, claim);
  } catch (error) {
    await claim?.failed().catch(() => {});
    throw error;
  }
  if ('reason' in outcome) {
    await claim?.failed().catch(() => {});
    return { kind: 'refused', refusal: outcome };
  }
  return { kind: 'charged', charged: outcome, claim };
}

/** One credits need's debit or reservation, as the service and the holds are asked for it. */
interface Charge {
  account_ref_id: string;
  product_code: string;
  meter_code: string;
  quantity: number;
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
