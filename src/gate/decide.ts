import type { AccessLookupOutcome } from '../access/cache.js';
import type { GateEvent } from '../core/diagnostics.js';
import { InvalidRequestError } from '../core/errors/index.js';
import { segment } from '../internal/checks.js';
import { channel, publish } from '../util/diagnostics.js';
import { safely } from '../util/safely.js';
import { problem, redirect } from './answer.js';
import { type Charged, chargeCredits, type Refusal } from './charge.js';
import type { Decider } from './decider.js';
import type { KeyClaim } from './idempotency.js';
import type { CheckedNeeds, NeedLookup } from './needs.js';
import { isNavigation } from './request.js';
import type { GateAllowed, GateDecision, GateNeed, GateRequest, GateSource, PaywallTarget } from './types.js';
import { DEFAULT_RETRY_AFTER_S, isUnavailable, retryAfterOf } from './unavailable.js';

/** Decisions go where the access cache's steps go (see core/diagnostics.ts). */
const accessChannel = /* @__PURE__ */ channel('billing-sdk:access');

/** Whether the app's `account` answered a promise (or any thenable) rather than a value. */
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null | undefined)?.then === 'function';

/** Worst first: a decision is as fresh as its least fresh part. */
const RANK: Record<GateSource, number> = { fallback: 3, stale: 2, live: 1, cache: 0 };
const worse = (a: GateSource, b: GateSource): GateSource => (RANK[a] >= RANK[b] ? a : b);

/**
 * The decision for one request: who asks (checked on every request), then subscriptions and
 * entitlements from the access cache (together), then credits, debited last and only once every
 * other part held (gate/charge.ts). A throw from the app's `account`, a need's quantity function or
 * an unexpected error rejects: the request is never allowed.
 *
 * Its steps are chained with `then` rather than awaited in one async function: that function's
 * suspended frame was the largest thing a gated request allocated (about 500 B, paid for in GC by
 * every request of the app; `npm run bench -- --gate`).
 */
export function decide<Req extends GateRequest, T = GateDecision>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
  then: Then<T> = asIs as Then<T>,
): Promise<T> {
  try {
    const named = gate.options.account(request);
    // A name given at once is read at once; a promise of one is awaited (no turn spent on a plain value).
    if (isThenable(named)) {
      return Promise.resolve(named).then((given) => decideFor(gate, request, needs, accountOf(given), then));
    }
    return decideFor(gate, request, needs, accountOf(named), then);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * What the caller does with the decision, run in the turn the decision is made: an adapter's next
 * step (Express's `next()`) is then one turn and one promise nearer the request than a `then` on
 * the decision would be.
 */
export type Then<T> = (decision: GateDecision) => T | PromiseLike<T>;

/** `then` of a decision made now, or of one still to come (a refusal's answer, the credits part). */
const thenOf = <T>(decision: GateDecision | Promise<GateDecision>, then: Then<T>): T | PromiseLike<T> =>
  decision instanceof Promise ? decision.then(then) : then(decision);

/** The decision once the account is known: its lookups, then what their verdict comes to. */
function decideFor<Req extends GateRequest, T>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
  account: string | undefined,
  then: Then<T>,
): Promise<T> {
  if (account === undefined) {
    return deny(gate, request, undefined, { reason: 'unauthenticated' }, needs).then(then);
  }
  const { lookups } = needs;
  // Most routes have one lookup: asked alone, without Promise.all's extra promises and turns.
  if (lookups.length === 1) {
    return ask(lookups[0] as NeedLookup<Req>, account, (looked) =>
      thenOf(decided(gate, request, needs, account, verdictOf(gate, looked)), then),
    );
  }
  return Promise.all(lookups.map((lookup) => ask(lookup, account, asIs))).then((looked) =>
    thenOf(decided(gate, request, needs, account, verdictOf(gate, ...looked)), then),
  );
}

/** A refusal, the "yes", or the credits part first (a function of its own: most routes have none). */
function decided<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
  account: string,
  verdict: GateSource | Refusal<Req>,
): GateDecision | Promise<GateDecision> {
  if (typeof verdict !== 'string') return deny(gate, request, account, verdict, needs);
  if (!needs.credits.length) return allow(gate, request, needs, account, verdict);
  return withCredits(gate, request, needs, account, verdict);
}

/** The credits part, once every other part held: debited or held, refused, or answered (a replay). */
async function withCredits<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
  account: string,
  verdict: GateSource,
): Promise<GateDecision> {
  const credits = await chargeCredits(gate, request, account, needs);
  if (credits.kind === 'answered') return credits.decision;
  if (credits.kind === 'refused') return deny(gate, request, account, credits.refusal, needs);
  return allow(gate, request, needs, account, worse(verdict, 'live'), credits.charged, credits.claim);
}

/**
 * What the access lookups came to: where the "yes" came from (as fresh as its least fresh part), or
 * the refusal. A definite "no" wins over a part the service could not answer.
 */
function verdictOf<Req extends GateRequest>(
  gate: Decider<Req>,
  ...looked: Looked<Req>[]
): GateSource | Refusal<Req> {
  let source: GateSource = 'cache';
  let down: Refusal<Req> | undefined;
  for (const l of looked) {
    if (l.kind === 'no') return l.refusal;
    if (l.kind === 'yes') source = worse(source, l.source);
    else if (gate.options.onUnavailable !== 'open')
      down ??= { reason: 'unavailable', retryAfterS: l.retryAfterS };
    else source = 'fallback';
  }
  return down ?? source;
}

/** The "yes": the account, how fresh the decision is, and what the credits part charged. */
function allow<Req extends GateRequest>(
  gate: Decider<Req>,
  request: Req,
  needs: CheckedNeeds<Req>,
  account: string,
  source: GateSource,
  charged?: Charged,
  claim?: KeyClaim,
): GateAllowed {
  if (accessChannel?.hasSubscribers) tellAllowed(source, needs);
  const allowed: GateAllowed = { allowed: true, account_ref_id: account, source };
  if (charged?.debit) allowed.debit = charged.debit;
  if (charged?.hold) allowed.hold = charged.hold;
  if (claim) {
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

/** The "yes" of each source, made once: an allowed request allocates none. */
const YES: { [S in GateSource]: { kind: 'yes'; source: S } } = {
  cache: { kind: 'yes', source: 'cache' },
  stale: { kind: 'yes', source: 'stale' },
  live: { kind: 'yes', source: 'live' },
  fallback: { kind: 'yes', source: 'fallback' },
};

/**
 * One access answer, and where it came from (an access cache of another making, a test double,
 * says nothing of that: its answers count as `'live'`), handed to `next` in the same turn. The
 * service being unreachable is an outcome here, not a throw. A `then` with the next step inside
 * rather than an async function awaited: one turn and one promise fewer, and no suspended frame.
 */
function ask<Req extends GateRequest, T>(
  lookup: NeedLookup<Req>,
  account: string,
  next: (looked: Looked<Req>) => T | PromiseLike<T>,
): Promise<T> {
  const outcome: AccessLookupOutcome = {};
  let answer: Promise<boolean>;
  try {
    answer = Promise.resolve(lookup.ask(account, { outcome }));
  } catch (error) {
    answer = Promise.reject(error);
  }
  return answer.then(
    (yes) =>
      next(
        yes ? yesFrom(outcome.source) : { kind: 'no', refusal: { reason: lookup.reason, need: lookup.need } },
      ),
    (error: unknown) => {
      if (!isUnavailable(error)) throw error;
      return next({ kind: 'unavailable', retryAfterS: retryAfterOf(error) });
    },
  );
}

/** The "yes" of where the answer came from: an access cache of another making that says nothing, or something else, is `'live'`. */
const yesFrom = (source: unknown): Looked<GateRequest> =>
  typeof source === 'string' && Object.hasOwn(YES, source) ? YES[source as GateSource] : YES.live;

const asIs = <T>(value: T): T => value;

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

function kindsOf<Req>(needs: CheckedNeeds<Req>): GateEvent['needs'] {
  const kinds: GateEvent['needs'] = [];
  if (needs.subscriptions.length) kinds.push('subscription');
  if (needs.entitlements.length) kinds.push('entitlement');
  if (needs.credits.length) kinds.push('credits');
  if (needs.usage.length) kinds.push('usage');
  return kinds;
}

/**
 * Publishes an allowed decision. A function of its own: the event maker's variables would otherwise
 * be allocated on every allowed request, listened to or not.
 */
function tellAllowed<Req>(source: GateSource, needs: CheckedNeeds<Req>): void {
  tell(() => ({ event: 'decision', allowed: true, source, needs: kindsOf(needs) }));
}

/** Publishes a decision; `make` runs only when someone listens (an unobserved decision builds nothing). */
function tell(make: () => GateEvent): void {
  publish(accessChannel, make);
}
