import type { BillingClient } from '../client.js';
import { NotFoundError } from '../core/errors/index.js';
import type { AccountStatusParams } from '../resources/accounts.js';
import { isNotFoundAnswer } from '../resources/accounts.js';
import type { EntitlementCheckParams } from '../resources/entitlements.js';
import { type AccountStatus, isActiveIn } from '../schemas/account-status.js';

/**
 * What the service said, as the cache keeps it. `isActive` and `status` of one account and filter
 * share one answer (one request serves both); the documented not-found is an answer too ("no
 * access"), never any other failure: an error is never cached.
 */
export type Answer =
  | { kind: 'status'; status: AccountStatus }
  | { kind: 'not-found'; error: NotFoundError }
  | { kind: 'entitlement'; has_access: boolean };

/** An answer and when the service gave it (the cache's clock). */
export interface Given {
  answer: Answer;
  at: number;
}

/** A kept answer: until when it is fresh, too. */
export interface Entry extends Given {
  expires: number;
}

/** A lookup the cache can answer: what identifies it, and how to ask the service. */
export interface Question {
  /** The client operation that answers it (published on `billing-sdk:access`). */
  operation: 'accounts.status' | 'entitlements.check';
  /** The account whose invalidation drops this answer. */
  account: string;
  /** The question without the account: the same for every account a route asks about. */
  head: string;
  /** Identifies the answer across instances (no generation in it): `head` and the account. */
  readonly key: string;
  /** Asks the service. `signal` is the cache's own, never a caller's: the request is shared. */
  ask(billing: BillingClient, signal: AbortSignal): Promise<Answer>;
}

/**
 * A question for any account: what a lookup answered from memory reads (`head` and `operation`),
 * and the question itself, made only when the service or a shared store must be asked. A prepared
 * lookup holds one per route; an unprepared one is its own question.
 */
export interface Asking {
  readonly head: string;
  readonly operation: Question['operation'];
  question(account: string): Question;
}

/** A "no": kept for `denyTtlMs` rather than `ttlMs`. */
export function isDenial(answer: Answer): boolean {
  switch (answer.kind) {
    case 'status':
      return !isActiveIn(answer.status);
    case 'not-found':
      return true;
    case 'entitlement':
      return !answer.has_access;
  }
}

/** The yes/no of `isActive` or `hasEntitlement` in an answer; the documented not-found is a "no". */
export function yesOf(answer: Answer): boolean {
  return answer.kind === 'status'
    ? isActiveIn(answer.status)
    : answer.kind === 'entitlement' && answer.has_access;
}

/** What JSON escapes in a string (its input is well-formed: the parameters were checked). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON escapes exactly U+0000 to U+001F, `"` and `\`.
const ESCAPED = /["\\\u0000-\u001f]/;

/**
 * A parameter as JSON (`null` when absent), which delimits itself. A string with nothing to escape
 * (every code and name in practice) is quoted as it is: `JSON.stringify` costs ~100 ns a call, and
 * every lookup makes a key.
 */
const json = (value: string | undefined): string =>
  value === undefined ? 'null' : ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`;

/**
 * The head of a question's key: its kind and parameters as JSON; the account follows it (last, so no
 * two questions share a key). The same across instances and versions (a shared store's key).
 */
const headOf = (kind: string, a: string | undefined, b: string | undefined): string =>
  `${kind} ${json(a)} ${json(b)} `;

/**
 * The service's documented not-found answer (an unknown account) is an answer, "no access", for
 * `status` and `entitlements.check` alike; any other failure is thrown, never cached.
 */
function notFoundAnswer(error: unknown): Answer {
  if (isNotFoundAnswer(error)) return { kind: 'not-found', error };
  throw error;
}

/**
 * A question: one object, its key made only when a shared store asks for it, its request only when
 * the cache has no answer (a lookup answered from memory, a gated request's usual case, reads
 * `head` and `account` alone).
 */
abstract class AskedOf<F extends object> implements Question, Asking {
  abstract readonly operation: Question['operation'];

  constructor(
    readonly head: string,
    readonly account: string,
    /** The parameters besides the account, as the unprepared call passes them. */
    protected readonly filter: F,
  ) {}

  get key(): string {
    return this.head + this.account;
  }

  /** Itself: an unprepared lookup's question is made for its one account. */
  question(): Question {
    return this;
  }

  abstract ask(billing: BillingClient, signal: AbortSignal): Promise<Answer>;
}

class StatusAsked extends AskedOf<Omit<AccountStatusParams, 'account_ref_id'>> {
  get operation() {
    return 'accounts.status' as const;
  }

  ask(billing: BillingClient, signal: AbortSignal): Promise<Answer> {
    return billing.accounts
      .status({ ...this.filter, account_ref_id: this.account }, { signal })
      .then((status): Answer => ({ kind: 'status', status }), notFoundAnswer);
  }
}

class EntitlementAsked extends AskedOf<Omit<EntitlementCheckParams, 'account_ref_id'>> {
  get operation() {
    return 'entitlements.check' as const;
  }

  ask(billing: BillingClient, signal: AbortSignal): Promise<Answer> {
    return billing.entitlements
      .check({ ...this.filter, account_ref_id: this.account }, { signal })
      .then(({ has_access }): Answer => ({ kind: 'entitlement', has_access }), notFoundAnswer);
  }
}

/** The question behind `isActive` and `status` (parameters already checked). */
export function statusQuestion(params: AccountStatusParams): Question & Asking {
  return new StatusAsked(headOf('status', params.subscription, params.tier), params.account_ref_id, params);
}

/**
 * The questions behind `isActive` and `status` for one filter (checked), by account: the key's
 * filter part made once, so each call costs the account alone.
 */
export function preparedStatusQuestion(params: Record<string, unknown>): Asking {
  const { subscription, tier } = params as Partial<AccountStatusParams>;
  const head = headOf('status', subscription, tier);
  // Only the filters given, as the unprepared call passes them.
  const filter = {
    ...(subscription === undefined ? {} : { subscription }),
    ...(tier === undefined ? {} : { tier }),
  };
  return {
    head,
    operation: 'accounts.status',
    question: (account) => new StatusAsked(head, account, filter),
  };
}

/** As {@link preparedStatusQuestion}, for `hasEntitlement`. */
export function preparedEntitlementQuestion(params: Record<string, unknown>): Asking {
  const { product_code, entitlement_code } = params as unknown as EntitlementCheckParams;
  const head = headOf('entitlement', product_code, entitlement_code);
  const filter = { product_code, entitlement_code };
  return {
    head,
    operation: 'entitlements.check',
    question: (account) => new EntitlementAsked(head, account, filter),
  };
}

/** The question behind `hasEntitlement` (parameters already checked). */
export function entitlementQuestion(params: EntitlementCheckParams): Question & Asking {
  return new EntitlementAsked(
    headOf('entitlement', params.product_code, params.entitlement_code),
    params.account_ref_id,
    params,
  );
}

/** An answer as JSON for a shared store: a not-found keeps only what rebuilds its error. */
export function toShared(answer: Answer): unknown {
  return answer.kind === 'not-found'
    ? { kind: answer.kind, body: answer.error.body, request: answer.error.request }
    : answer;
}

/** The answer a shared store gave back; `undefined` when it is not one the cache wrote. */
export function fromShared(value: unknown): Answer | undefined {
  const v = value as Record<string, unknown> | null;
  switch (v?.kind) {
    case 'status':
      return typeof v.status === 'object' && v.status !== null
        ? { kind: 'status', status: v.status as AccountStatus }
        : undefined;
    case 'entitlement':
      return typeof v.has_access === 'boolean'
        ? { kind: 'entitlement', has_access: v.has_access }
        : undefined;
    case 'not-found': {
      const request = v.request as NotFoundError['request'] | undefined;
      return request && typeof request.operation === 'string'
        ? { kind: 'not-found', error: new NotFoundError(404, {}, v.body, request) }
        : undefined;
    }
    default:
      return undefined;
  }
}
