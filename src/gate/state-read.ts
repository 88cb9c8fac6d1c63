import type { AccessCache } from '../access/cache.js';
import type { BillingClient } from '../client.js';
import { InvalidRequestError, type InvalidRequestIssue } from '../core/errors/index.js';
import {
  check,
  checkOptionsObject,
  integer,
  isPlainObject,
  type Rule,
  required,
  text,
} from '../internal/checks.js';
import { isNotFoundAnswer } from '../resources/accounts.js';
import { type AccountStatus, isActiveIn, subscriptionsOf } from '../schemas/account-status.js';
import type { PaywallLinks } from './links.js';
import type { AccountState, AccountStateView } from './state-types.js';
import type { PaywallTarget } from './types.js';

const OPERATION = 'gate.state';
const MAX_TIMER_MS = 2_147_483_647;

/** A view as checked once, at start-up, with defaults filled in. */
export interface CheckedView {
  features: [name: string, ask: (account: string) => Promise<boolean>][];
  credits: { product_code: string; meter_code: string }[];
  paywall: PaywallTarget | undefined;
  perAccount: number;
  total: number;
  heartbeatMs: number;
  balanceTtlMs: number;
}

const viewRules = {
  features: [
    (v: unknown) =>
      isPlainObject(v) ? undefined : 'must be an object of { product_code, entitlement_code }',
  ],
  credits: [
    (v: unknown) => (Array.isArray(v) ? undefined : 'must be an array of { product_code, meter_code }'),
  ],
  paywall: [
    (v: unknown) =>
      isPlainObject(v) ? undefined : 'must be { product_name } or { subscription_name, tier_name }',
  ],
  streams: [(v: unknown) => (isPlainObject(v) ? undefined : 'must be an object')],
};
const streamRules = {
  perAccount: [integer(1)],
  total: [integer(1)],
  heartbeatMs: [integer(1, MAX_TIMER_MS)],
  balanceTtlMs: [integer(0, MAX_TIMER_MS)],
};
const paywallTargetRules: Record<string, Rule[]> = {
  product_name: [text],
  subscription_name: [text],
  tier_name: [text],
};
/** The names the page gives features: plain identifiers, so they never collide with `__proto__` tricks. */
const NAME = /^[A-Za-z_$][\w$-]{0,63}$/;

/**
 * Checks a view (a typo fails when the app starts, not per request) and prepares its lookups.
 *
 * @throws {@link InvalidRequestError} naming each bad field (`view.features.export.product_code`).
 */
export function checkView(view: AccountStateView, access: AccessCache, hasPaywall: boolean): CheckedView {
  checkOptionsObject(OPERATION, view, 'view');
  const given = check(OPERATION, view ?? {}, viewRules, undefined, 'view.') as AccountStateView;
  const issues: InvalidRequestIssue[] = [];
  const features: CheckedView['features'] = [];
  for (const [name, spec] of Object.entries(given.features ?? {})) {
    if (!NAME.test(name))
      issues.push({
        field: `view.features.${name}`,
        message: 'must be a plain name (letters, digits, _ - $)',
      });
    const checked = nested(() =>
      check(
        OPERATION,
        spec,
        { product_code: [required, text], entitlement_code: [required, text] },
        undefined,
        `view.features.${name}.`,
      ),
    );
    if (Array.isArray(checked)) issues.push(...checked);
    else
      features.push([
        name,
        access.prepare('hasEntitlement', checked as { product_code: string; entitlement_code: string }),
      ]);
  }
  const credits: CheckedView['credits'] = [];
  for (const [i, meter] of (given.credits ?? []).entries()) {
    const checked = nested(() =>
      check(
        OPERATION,
        meter,
        { product_code: [required, text], meter_code: [required, text] },
        undefined,
        `view.credits[${i}].`,
      ),
    );
    if (Array.isArray(checked)) issues.push(...checked);
    else credits.push(checked as CheckedView['credits'][number]);
  }
  if (given.paywall) {
    const target = nested(() =>
      check(OPERATION, given.paywall, paywallTargetRules, undefined, 'view.paywall.'),
    );
    const t = target as Record<string, unknown>;
    if (Array.isArray(target)) issues.push(...target);
    else if (
      !(t.product_name && !t.subscription_name && !t.tier_name) &&
      !(t.subscription_name && t.tier_name && !t.product_name)
    )
      issues.push({
        field: 'view.paywall',
        message: 'must be { product_name } or { subscription_name, tier_name }',
      });
    else if (!hasPaywall)
      issues.push({ field: 'view.paywall', message: "needs the gate's paywall option (its signing key)" });
  }
  const streams = nested(() =>
    check(OPERATION, given.streams ?? {}, streamRules, undefined, 'view.streams.'),
  );
  if (Array.isArray(streams)) issues.push(...streams);
  if (issues.length) throw new InvalidRequestError(OPERATION, issues);
  const s = streams as NonNullable<AccountStateView['streams']>;
  return {
    features,
    credits,
    paywall: given.paywall,
    perAccount: s.perAccount ?? 20,
    total: s.total ?? 1_000,
    heartbeatMs: s.heartbeatMs ?? 15_000,
    balanceTtlMs: s.balanceTtlMs ?? 30_000,
  };
}

/** A nested check's result, or its issues (so that every bad field of the view is named at once). */
function nested(run: () => Record<string, unknown>): Record<string, unknown> | InvalidRequestIssue[] {
  try {
    return run();
  } catch (error) {
    if (error instanceof InvalidRequestError) return [...error.issues];
    throw error;
  }
}

/**
 * Balances read for states, each reused for `ttlMs`; concurrent reads of one share one request.
 * An account's are dropped when it changes (an invalidation, a debit through this SDK).
 */
export class Balances {
  readonly #held = new Map<string, { until: number; value: Promise<number> }>();

  constructor(
    private readonly billing: BillingClient,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(account_ref_id: string, product_code: string, meter_code: string): Promise<number> {
    const key = JSON.stringify([account_ref_id, product_code, meter_code]);
    const held = this.#held.get(key);
    if (held && held.until > this.now()) return held.value;
    // Bounded: the oldest goes first (a balance not kept is read again, nothing worse).
    if (this.#held.size >= 10_000) this.#held.delete(this.#held.keys().next().value as string);
    // An account the service does not know (signed up, never billed) has no credits: its
    // documented not-found is an answer, as it is for `active` and the features.
    const value = this.billing.usage.balance({ account_ref_id, product_code, meter_code }).then(
      (b) => b.balance,
      (error: unknown) => {
        if (isNotFoundAnswer(error)) return 0;
        throw error;
      },
    );
    const entry = { until: this.now() + this.ttlMs, value };
    this.#held.set(key, entry);
    // A failure is never kept: the next read asks again.
    value.catch(() => {
      if (this.#held.get(key) === entry) this.#held.delete(key);
    });
    return value;
  }

  /** Drops the balances of `account` (all of them for `undefined`). */
  drop(account: string | undefined): void {
    if (account === undefined) {
      this.#held.clear();
      return;
    }
    const prefix = JSON.stringify([account]).slice(0, -1);
    for (const key of this.#held.keys()) if (key.startsWith(prefix)) this.#held.delete(key);
  }
}

/** The tier of the first active subscription, or `null`. */
function tierOf(status: AccountStatus | undefined): string | null {
  const active = status ? subscriptionsOf(status).find((s) => s.is_active) : undefined;
  return active?.subscription_tier.label_name ?? null;
}

/** What reading a state needs. */
export interface StateReader {
  access: AccessCache;
  view: CheckedView;
  balances: Balances;
  links: PaywallLinks | undefined;
}

/**
 * The account's state, every part read together: from memory when the access cache and the
 * balances hold it. A part the service could not answer rejects the whole (never a made-up state).
 */
export async function readState(
  reader: StateReader,
  account_ref_id: string,
  email: string | undefined,
): Promise<AccountState> {
  const { access, view, balances, links } = reader;
  const status = access.status({ account_ref_id }).catch((error: unknown) => {
    if (isNotFoundAnswer(error)) return undefined;
    throw error;
  });
  const features = Promise.all(view.features.map(([, ask]) => ask(account_ref_id)));
  const credits = Promise.all(
    view.credits.map((m) => balances.get(account_ref_id, m.product_code, m.meter_code)),
  );
  const link = view.paywall && links ? links.get(account_ref_id, view.paywall, email) : undefined;
  const [s, has, amounts, paywall_url] = await Promise.all([status, features, credits, link]);
  const state: AccountState = {
    account_ref_id,
    active: s ? isActiveIn(s) : false,
    tier: tierOf(s),
    features: Object.fromEntries(view.features.map(([name], i) => [name, has[i] as boolean])),
    credits: Object.create(null) as AccountState['credits'],
    updated_at: new Date().toISOString(),
  };
  for (const [i, m] of view.credits.entries()) {
    // Codes are the service's, any string: a null-prototype object takes `__proto__` as a plain key.
    const product = state.credits[m.product_code] ?? (Object.create(null) as Record<string, number>);
    product[m.meter_code] = amounts[i] as number;
    state.credits[m.product_code] = product;
  }
  if (paywall_url) state.paywall_url = paywall_url;
  return state;
}
