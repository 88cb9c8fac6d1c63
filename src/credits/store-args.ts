import { checkArgs, integer, positiveNumber, type Rule } from '../internal/checks.js';
import { MAX_TIMER_MS } from '../util/timers.js';
import { isWellFormed } from '../util/well-formed.js';
import type { HoldLedger, HoldRequest } from './store.js';

/**
 * A name (an account, product, meter, hold id or fence): a string every store keeps unchanged. A
 * lone surrogate would become U+FFFD in UTF-8 (two names could share a key), and PostgreSQL's text
 * cannot hold a NUL: both are refused by every store alike.
 */
export const name: Rule = (v) =>
  typeof v === 'string' && isWellFormed(v) && !v.includes('\u0000')
    ? undefined
    : 'must be a string without a lone UTF-16 surrogate or a NUL character';

/** A balance as the service gives it: an integer JavaScript, Lua and a bigint all keep exactly. */
export const balanceRule: Rule = integer(Number.MIN_SAFE_INTEGER);

/** A duration a store times (a hold's ttl, balanceTtlMs): a number of ms > 0 a timer can wait. */
export const durationRule: Rule = (v) =>
  positiveNumber(v) ?? ((v as number) > MAX_TIMER_MS ? `must be <= ${MAX_TIMER_MS}` : undefined);

/** The rules of a ledger's three names, read safely from whatever was passed. */
export function ledgerArgs(ledger: unknown): [string, Rule[], unknown][] {
  const l = (typeof ledger === 'object' && ledger !== null ? ledger : {}) as Partial<HoldLedger>;
  return [
    ['ledger.account', [name], l.account],
    ['ledger.product', [name], l.product],
    ['ledger.meter', [name], l.meter],
  ];
}

/**
 * The argument checks of every {@link HoldStore} method, the same in every store of the SDK: a bad
 * argument throws an InvalidRequestError naming each, before the store is touched. `store` names
 * the store in the error (`memoryHoldStore.reserve: …`).
 */
export const checkStoreArgs = {
  reserve(store: string, ledger: unknown, hold: unknown, balanceTtlMs: unknown): void {
    const h = (typeof hold === 'object' && hold !== null ? hold : {}) as Partial<HoldRequest>;
    checkArgs(`${store}.reserve`, [
      ...ledgerArgs(ledger),
      ['hold.id', [name], h.id],
      ['hold.quantity', [integer(1)], h.quantity],
      ['hold.ttlMs', [durationRule], h.ttlMs],
      ['balanceTtlMs', [durationRule], balanceTtlMs],
    ]);
  },
  setBalance(store: string, ledger: unknown, balance: unknown, fence: unknown): void {
    checkArgs(`${store}.setBalance`, [
      ...ledgerArgs(ledger),
      ['balance', [balanceRule], balance],
      ['fence', [name], fence],
    ]);
  },
  settle(store: string, ledger: unknown, id: unknown, remaining: unknown, debited: unknown): void {
    checkArgs(`${store}.settle`, [
      ...ledgerArgs(ledger),
      ['id', [name], id],
      ['remaining', [balanceRule], remaining],
      ['debited', [integer(0)], debited],
    ]);
  },
  release(store: string, ledger: unknown, id: unknown): void {
    checkArgs(`${store}.release`, [...ledgerArgs(ledger), ['id', [name], id]]);
  },
  extend(store: string, ledger: unknown, id: unknown, ttlMs: unknown): void {
    checkArgs(`${store}.extend`, [
      ...ledgerArgs(ledger),
      ['id', [name], id],
      ['ttlMs', [durationRule], ttlMs],
    ]);
  },
  invalidate(store: string, account: unknown): void {
    checkArgs(`${store}.invalidate`, [['account', [name], account]]);
  },
};
