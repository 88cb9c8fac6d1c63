import { type AnswerSource, answerWithSource, freshAnswer } from '../access/cache.js';
import type { HotKeys } from '../access/hot-keys.js';
import type { GateEvent } from '../core/diagnostics.js';
import { APIConnectionError, APIError, InvalidRequestError, RateLimitError } from '../core/errors/index.js';
import { segment } from '../internal/checks.js';
import type { DebitApproved } from '../schemas/usage.js';
import { channel, publish } from '../util/diagnostics.js';
import { randomUUID } from '../util/uuid.js';
import { problem, redirect } from './answer.js';
import type { PaywallLinks } from './links.js';
import { type CheckedNeeds, type NeedLookup, quantityOf } from './needs.js';
import { headerOf, isNavigation } from './request.js';
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
const DEFAULT_RETRY_AFTER_S = 5;

/** The two lookups of the access cache a gate makes, and their parameters (checked at start-up). */
type GateLookup = 'isActive' | 'hasEntitlement';
type GateLookupParams = Parameters<typeof answerWithSource>[2];

/** The service could not answer (down, slow, 5xx, 429): a "maybe", never a "no" nor a "yes". */
function isUnavailable(error: unknown): boolean {
  return (
    error instanceof APIConnectionError ||
    (error instanceof APIError && (error.status === 429 || error.status >= 500))
  );
}

/** Worst first: a decision is as fresh as its least fresh part. */
const RANK: Record<GateSource, number> = { fallback: 3, stale: 2, live: 1, cache: 0 };
const worse = (a: GateSource, b: GateSource): GateSource => (RANK[a] >= RANK[b] ? a : b);

/** What a refusal needs to be answered: who, why, which need, and what the service said. */
interface Refusal<Req> {
  reason: GateDenialReason;
  need?: GateNeed<Req> | undefined;
  remaining_balance?: number | undefined;
  retryAfterS?: number | undefined;
}

/** What one gate decides with: its options, and its links (shared by every route of the gate). */
export interface Decider<Req extends GateRequest> {
  options: GateOptions<Req>;
  links: PaywallLinks | undefined;
  /** The access cache's keys of the accounts asked lately, reused (see HotKeys). */
  keys: HotKeys;
}

/**
 * The decision for one request: who asks, then subscriptions and entitlements from the access
 * cache (together), then credits, debited last and only once every other part held. A throw from
 * the app's `account`, a need's quantity function or an unexpected error fails the request: it is
 * never allowed.
 *
 * Answered without a promise when it can be (a synchronous `account`, every answer fresh in memory,
 * a "yes", no credits): the commonest request of a gated route then costs a few map lookups, not a
 * chain of microtasks. Anything else is a promise; both are the same decision.
 */
export function decide<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
): GateDecision | Promise<GateDecision> {
  const given = gate.options.account(request);
  // Most apps read the session synchronously: no microtask for them.
  if (typeof (given as PromiseLike<unknown> | undefined)?.then === 'function') {
    return Promise.resolve(given).then((account) => decideFor(gate, request, needs, account));
  }
  return decideFor(gate, request, needs, given);
}

function decideFor<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
  account: unknown,
): GateDecision | Promise<GateDecision> {
  if (account === undefined || account === null || account === '') {
    return deny(gate, request, undefined, { reason: 'unauthenticated' }, needs);
  }
  // Checked here, once: the access cache then takes the gate's lookups as checked (the needs were, at start-up).
  if (typeof account !== 'string') {
    throw new InvalidRequestError('gate', [
      { field: 'account', message: 'must answer a string or undefined' },
    ]);
  }
  // An account with keys made lately passed this check then (its keys are made only after it).
  const bad = gate.keys.knows(account) ? undefined : segment(account);
  if (typeof bad === 'string') throw new InvalidRequestError('gate', [{ field: 'account', message: bad }]);
  const { access } = gate.options;
  const { lookups } = needs;
  // Built only once a part is not a "yes" from memory: the commonest request allocates nothing here.
  let looked: (Looked<Req> | Promise<Looked<Req>>)[] | undefined;
  for (let i = 0; i < lookups.length; i++) {
    const l = lookups[i] as NeedLookup<Req>;
    const now = freshAnswer(access, l.kind, account, l.keyPart, gate.keys);
    if (now === true && looked === undefined) continue;
    looked ??= lookups.slice(0, i).map((): Looked<Req> => YES_FROM_MEMORY);
    looked.push(
      now === undefined ? ask(gate, l.kind, l.params(account), l.need) : fromCache(now, l.kind, l.need),
    );
  }
  if (looked === undefined && !needs.credits.length) return allowed(needs, account, 'cache');
  return settle(gate, request, needs, account, looked ?? lookups.map((): Looked<Req> => YES_FROM_MEMORY));
}

const YES_FROM_MEMORY = Object.freeze({ kind: 'yes', source: 'cache' } as const);

/** The rest of a decision that needs a request, a refresh or a "no" (whose link may be resolved). */
async function settle<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
  account: string,
  asked: (Looked<Req> | Promise<Looked<Req>>)[],
): Promise<GateDecision> {
  // One need (the common route) is awaited alone: Promise.all would cost promises of its own.
  const looked = asked.length === 1 ? [await asked[0]] : await Promise.all(asked);
  // A definite "no" wins over a part the service could not answer.
  const refused = looked.find((l) => l?.kind === 'no');
  if (refused?.kind === 'no') return deny(gate, request, account, refused.refusal, needs);
  let source: GateSource = 'cache';
  for (const l of looked) {
    if (l?.kind === 'yes') source = worse(source, l.source);
    else if (l?.kind === 'unavailable') {
      if (gate.options.onUnavailable !== 'open') {
        return deny(gate, request, account, { reason: 'unavailable', retryAfterS: l.retryAfterS }, needs);
      }
      source = 'fallback';
    }
  }
  let debit: DebitApproved | undefined;
  for (const [i, credits] of needs.credits.entries()) {
    const outcome = await spend(gate, request, account, credits, i, needs.credits.length);
    if ('reason' in outcome) return deny(gate, request, account, outcome, needs);
    debit = outcome;
    source = worse(source, 'live');
  }
  return allowed(needs, account, source, debit);
}

function allowed<Req>(
  needs: CheckedNeeds<Req>,
  account: string,
  source: GateSource,
  debit?: DebitApproved,
): GateAllowed {
  tell(() => ({ event: 'decision', allowed: true, source, needs: kindsOf(needs) }));
  return debit
    ? { allowed: true, account_ref_id: account, source, debit }
    : { allowed: true, account_ref_id: account, source };
}

/** An answer memory held within its ttl. */
function fromCache<Req>(yes: boolean, kind: GateLookup, need: GateNeed<Req>): Looked<Req> {
  return yes ? { kind: 'yes', source: 'cache' } : refusal(kind, need);
}

function refusal<Req>(kind: GateLookup, need: GateNeed<Req>): Looked<Req> {
  return { kind: 'no', refusal: { reason: kind === 'isActive' ? 'inactive' : 'not_entitled', need } };
}

type Looked<Req> =
  | { kind: 'yes'; source: AnswerSource }
  | { kind: 'no'; refusal: Refusal<Req> }
  | { kind: 'unavailable'; retryAfterS: number | undefined };

/** One access answer; the service being unreachable is an outcome here, not a throw. */
async function ask<Req extends GateRequest>(
  gate: Decider<Req>,
  kind: GateLookup,
  params: GateLookupParams,
  need: GateNeed<Req>,
): Promise<Looked<Req>> {
  try {
    const { value, source } = await answerWithSource(gate.options.access, kind, params);
    return value ? { kind: 'yes', source } : refusal(kind, need);
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    return { kind: 'unavailable', retryAfterS: retryAfterOf(error) };
  }
}

/**
 * Debits one credits need. Its key is the request's `Idempotency-Key` (a client retrying never pays
 * twice; with several credits needs, one key each from it), else a new one. Never fails open: the
 * service unreachable is a 503 whatever `onUnavailable` says.
 */
async function spend<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  account: string,
  credits: CheckedNeeds<Req>['credits'][number],
  index: number,
  count: number,
): Promise<DebitApproved | Refusal<Req>> {
  const quantity = await quantityOf(credits.quantity, request, 'need.credits.quantity');
  const given = headerOf(request, 'idempotency-key');
  const event_key = given ? (count === 1 ? given : `${given}:${index}`) : randomUUID();
  const { product_code, meter_code } = credits;
  let result: Awaited<ReturnType<GateOptions<Req>['billing']['usage']['debit']>>;
  try {
    result = await gate.options.billing.usage.debit({
      account_ref_id: account,
      product_code,
      meter_code,
      quantity,
      event_key,
    });
  } catch (error) {
    if (!isUnavailable(error)) throw error;
    return { reason: 'unavailable', retryAfterS: retryAfterOf(error) };
  }
  if (result.approved) return result;
  if (result.error_code === 'insufficient_credits') {
    return { reason: 'insufficient_credits', need: { credits }, remaining_balance: result.remaining_balance };
  }
  // The product or meter is not a prepaid-credits one: the route is misconfigured, not the customer short.
  throw new InvalidRequestError('gate', [
    { field: 'need.credits', message: `refused by the service: ${String(result.error_code)}` },
  ]);
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
function retryAfterOf(error: unknown): number | undefined {
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
