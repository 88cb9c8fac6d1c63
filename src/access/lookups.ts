import type { check, Rule } from '../internal/checks.js';
import { accountStatus } from '../resources/accounts.js';
import { checkEntitlement } from '../resources/entitlements.js';
import type { AccountStatus } from '../schemas/account-status.js';
import {
  type Answer,
  type Asking,
  entitlementQuestion,
  preparedEntitlementQuestion,
  preparedStatusQuestion,
  type Question,
  statusQuestion,
  yesOf,
} from './answers.js';
import type { AccessLookupOptions, AccessLookups } from './types.js';

/** What an endpoint's parameters are checked with. */
export type Checked = { rules: Parameters<typeof check>[2]; cross?: Parameters<typeof check>[3] };

/** One of the lookups `prepare` knows: the unprepared path's parts, and its prepared question. */
export interface LookupSpec {
  operation: string;
  endpoint: Checked;
  // biome-ignore lint/suspicious/noExplicitAny: each spec's question takes its own parameters.
  question: (params: any) => Question & Asking;
  prepared: (params: Record<string, unknown>) => Asking;
  read: (answer: Answer) => unknown;
}

export const LOOKUPS: Record<keyof AccessLookups, LookupSpec> = {
  isActive: {
    operation: 'access.isActive',
    endpoint: accountStatus,
    question: statusQuestion,
    prepared: preparedStatusQuestion,
    read: yesOf,
  },
  status: {
    operation: 'access.status',
    endpoint: accountStatus,
    question: statusQuestion,
    prepared: preparedStatusQuestion,
    read: statusOf,
  },
  hasEntitlement: {
    operation: 'access.hasEntitlement',
    endpoint: checkEntitlement,
    question: entitlementQuestion,
    prepared: preparedEntitlementQuestion,
    read: yesOf,
  },
};

/** An account every account rule takes: stands in for the one each prepared call passes. */
export const STAND_IN = 'account';
export const NO_OPTIONS: AccessLookupOptions = Object.freeze({});

/** Whether `value` passes every rule (`required` is a marker that passes anything). */
export function passes(rules: Rule[], value: unknown): boolean {
  for (const rule of rules) if (rule(value) !== undefined) return false;
  return true;
}

/** `status`'s reading of an answer: the kept not-found answer is thrown again. */
export function statusOf(answer: Answer): AccountStatus {
  if (answer.kind === 'not-found') throw answer.error;
  return (answer as Extract<Answer, { kind: 'status' }>).status;
}
