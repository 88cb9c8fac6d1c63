import {
  check,
  checkOptions,
  func,
  integer,
  isPlainObject,
  jsonObject,
  oneOf,
  type Rule,
  required,
  text,
} from '../internal/checks.js';
import type { AICallOptions, AIMeterOptions } from './types.js';

/** A finite number ≥ 0: a price per token. */
const perToken: Rule = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? undefined : 'must be a finite number >= 0';

const priceRules = {
  input: [required, perToken],
  output: [required, perToken],
  cachedInput: [perToken],
  cacheWrite: [perToken],
  reasoning: [perToken],
};

/** Prices per token (each checked, unknown kinds refused), or a function. */
const price: Rule = (v, field = 'price') => {
  if (typeof v === 'function') return undefined;
  if (!isPlainObject(v))
    return 'must be { input, output, cachedInput?, cacheWrite?, reasoning? } or a function (usage, call) => number';
  try {
    check('createAIMeter', v, priceRules, undefined, `${field}.`);
    return undefined;
  } catch (error) {
    return (error as { issues: { field: string; message: string }[] }).issues;
  }
};

/** An object with the named methods (a tracker, holds, a hold of the gate's): duck-typed, as the SDK's other stores. */
const having =
  (what: string, ...methods: string[]): Rule =>
  (v) =>
    v !== null &&
    typeof v === 'object' &&
    methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function')
      ? undefined
      : `must be ${what}`;

const meterRules = {
  billing: [
    required,
    (v) =>
      typeof (v as { usage?: { debit?: unknown } } | null)?.usage?.debit === 'function'
        ? undefined
        : 'must be a BillingClient',
  ],
  product_code: [required, text],
  meter_code: [required, text],
  price: [required, price],
  charge: [oneOf(['track', 'debit', 'hold'])],
  tracker: [having('a UsageTracker (createUsageTracker)', 'track', 'flush', 'close')],
  holds: [having('CreditHolds (createCreditHolds)', 'reserve', 'invalidate')],
  maxQuantity: [(v) => (typeof v === 'function' ? undefined : integer(1)(v))],
  onError: [func],
} satisfies Record<keyof AIMeterOptions, Rule[]>;

const callRules = {
  account_ref_id: [required, text],
  event_key: [text],
  hold: [having("a gate's hold (decision.hold)", 'use')],
  metadata: [jsonObject],
} satisfies Record<keyof AICallOptions, Rule[]>;

/** The meter's options, checked: an `InvalidRequestError` naming every bad one, before anything is sent. */
export function checkMeterOptions(options: AIMeterOptions): AIMeterOptions {
  return checkOptions('createAIMeter', options, meterRules) as unknown as AIMeterOptions;
}

/** One wrap's options, checked when the model or client is wrapped. */
export function checkCallOptions(operation: string, options: AICallOptions): AICallOptions {
  return checkOptions(operation, options, callRules) as unknown as AICallOptions;
}
