import type { AccessCache, AccessLookupOptions, AccessLookups } from '../access/cache.js';
import { InvalidRequestError, type InvalidRequestIssue } from '../core/errors/index.js';
import { boolean, check, integer, isPlainObject, type Rule, required, text } from '../internal/checks.js';
import type {
  CreditsNeed,
  EntitlementNeed,
  GateNeed,
  GateNeeds,
  GateQuantity,
  SubscriptionNeed,
  UsageNeed,
} from './types.js';

/** One access-cache lookup of a route: a subscription or an entitlement need. */
export interface NeedLookup<Req> {
  need: GateNeed<Req>;
  /** Why a "no" to it refuses the request. */
  reason: 'inactive' | 'not_entitled';
  /**
   * The lookup for one account: the access cache's prepared lookup, made with the route (the
   * account is checked on every call, the rest was checked once).
   */
  ask(account: string, options: AccessLookupOptions): Promise<boolean>;
}

/** A route's needs sorted by kind, checked once, when the middleware is made. */
export interface CheckedNeeds<Req> {
  subscriptions: SubscriptionNeed[];
  entitlements: EntitlementNeed[];
  /** The subscriptions' and entitlements' lookups, in that order. */
  lookups: NeedLookup<Req>[];
  credits: CreditsNeed<Req>['credits'][];
  usage: UsageNeed<Req>['usage'][];
  /** The needs as given, for `paywall.target`. */
  all: GateNeed<Req>[];
}

const KINDS = ['subscription', 'entitlement', 'credits', 'usage'] as const;

/** A positive integer, or a function that gives one per request. */
const quantity: Rule = (v) => (typeof v === 'function' ? undefined : integer(1)(v));
const meter = {
  product_code: [required, text],
  meter_code: [required, text],
  quantity: [required, quantity],
};
const creditRules = { ...meter, hold: [boolean] };

/**
 * Checks a route's needs (a typo fails when the app starts, not per request) and sorts them.
 *
 * @throws {@link InvalidRequestError} naming the need and field (`need[1].credits.quantity`).
 */
export function checkNeeds<Req>(
  operation: string,
  needs: GateNeeds<Req>,
  hasTracker: boolean,
  hasHolds: boolean,
  access: AccessCache,
): CheckedNeeds<Req> {
  const list = (Array.isArray(needs) ? needs : [needs]) as GateNeed<Req>[];
  const many = Array.isArray(needs);
  const out: CheckedNeeds<Req> = {
    subscriptions: [],
    entitlements: [],
    lookups: [],
    credits: [],
    usage: [],
    all: list,
  };
  const issues: InvalidRequestIssue[] = [];
  if (list.length === 0) issues.push({ field: 'need', message: 'must name at least one need' });
  list.forEach((need, i) => {
    const at = many ? `need[${i}]` : 'need';
    const kinds = isPlainObject(need) ? KINDS.filter((k) => k in need) : [];
    if (kinds.length !== 1) {
      issues.push({ field: at, message: `must have exactly one of ${KINDS.join(', ')}` });
      return;
    }
    try {
      if ('subscription' in need) {
        check(operation, need, { subscription: [required, text], tier: [text] }, undefined, `${at}.`);
        out.subscriptions.push(need);
      } else if ('entitlement' in need) {
        const rules = { product_code: [required, text], entitlement_code: [required, text] };
        check(operation, need.entitlement, rules, undefined, `${at}.entitlement.`);
        out.entitlements.push(need);
      } else if ('credits' in need) {
        check(operation, need.credits, creditRules, undefined, `${at}.credits.`);
        if (need.credits.hold) {
          if (!hasHolds) issues.push({ field: `${at}.credits.hold`, message: 'needs the gate option holds' });
          if (out.credits.some((c) => c.hold)) {
            issues.push({ field: `${at}.credits.hold`, message: 'one credits need with hold per route' });
          }
        }
        out.credits.push(need.credits);
      } else {
        check(operation, need.usage, meter, undefined, `${at}.usage.`);
        if (!hasTracker) issues.push({ field: `${at}.usage`, message: 'needs the gate option tracker' });
        out.usage.push(need.usage);
      }
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error;
      issues.push(...error.issues);
    }
  });
  if (!hasHolds && out.credits.length > 1) {
    // Debited one by one, a later need refused would leave the earlier ones debited for a "no".
    issues.push({
      field: 'need',
      message:
        'has several credits needs: give the gate the option holds (each is then reserved before any is debited, and a refusal gives all back), or debit one credits need per route',
    });
  }
  if (issues.length) throw new InvalidRequestError(operation, issues);
  for (const need of out.subscriptions) {
    const { subscription, tier } = need;
    out.lookups.push({
      need,
      reason: 'inactive',
      ask: prepared(access, 'isActive', tier === undefined ? { subscription } : { subscription, tier }),
    });
  }
  for (const need of out.entitlements) {
    const { product_code, entitlement_code } = need.entitlement;
    out.lookups.push({
      need,
      reason: 'not_entitled',
      ask: prepared(access, 'hasEntitlement', { product_code, entitlement_code }),
    });
  }
  return out;
}

/**
 * A route's lookup, prepared with the route. An access cache of another making (a test double)
 * without `prepare` is asked through its lookup of the same name, as before.
 */
function prepared<K extends 'isActive' | 'hasEntitlement'>(
  access: AccessCache,
  lookup: K,
  params: AccessLookups[K]['params'],
): NeedLookup<unknown>['ask'] {
  if (typeof access.prepare === 'function') return access.prepare(lookup, params);
  const ask = access[lookup] as (p: object, o: AccessLookupOptions) => Promise<boolean>;
  return (account_ref_id, options) => ask.call(access, { ...params, account_ref_id }, options);
}

/** The quantity of a credits or usage need for one request: a function's answer is checked too. */
export async function quantityOf<Req>(
  given: GateQuantity<Req>,
  request: Req,
  field: string,
): Promise<number> {
  const value = typeof given === 'function' ? await given(request) : given;
  const bad = integer(1)(value);
  if (bad)
    throw new InvalidRequestError('gate', [{ field, message: `${bad} (the quantity function's answer)` }]);
  return value;
}
