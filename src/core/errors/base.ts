/**
 * The base of the error hierarchy: {@link BillingError}, its brand (how `instanceof` recognises an
 * error of another copy of the package) and the {@link RequestContext} the request errors carry.
 *
 * @module
 */
import type { BillingErrorName } from './names.js';

/** Where a request went: the SDK method, the HTTP method and the URL path (never the query string, which may hold an e-mail). */
export interface RequestContext {
  /** SDK method, e.g. `invoices.list`. */
  operation: string;
  /** HTTP method. */
  method: string;
  /** URL path, e.g. `/api/invoices/`. */
  path: string;
}

/**
 * Each class carries its name in a static `brand` field, so `instanceof` also recognises errors
 * made by another copy of the package in the same process (its ESM and CJS builds, or two
 * versions): the copies share the field's name but not the classes. A plain string key, not a
 * symbol: bundlers keep every class that has a computed static key, tree-shaken or not.
 */
const BRAND = 'brand';

/**
 * Whether `value` has `cls` on its prototype chain, or (when `brand` is given) any class carrying
 * that brand: the latter is how another copy of the package is recognised.
 */
export function inChain(value: unknown, cls: unknown, brand: string | undefined): boolean {
  if (value == null) return false;
  for (let proto = Object.getPrototypeOf(Object(value)); proto; proto = Object.getPrototypeOf(proto)) {
    const ctor = (proto as { constructor?: Record<string, unknown> | undefined }).constructor;
    if (ctor === cls || (brand && ctor && Object.hasOwn(ctor, BRAND) && ctor[BRAND] === brand)) return true;
  }
  return false;
}

/** Base class of every error the SDK throws. */
export class BillingError extends Error {
  /** @internal */
  static readonly brand: BillingErrorName = 'BillingError';
  /**
   * The class's name as a string literal (each subclass narrows it), so `switch (err.name)` works
   * after {@link isBillingError}, also across copies of the package.
   */
  override readonly name: BillingErrorName = 'BillingError';
  /**
   * The idempotency key of the debit or usage event whose call failed (set on every error of
   * `usage.debit` and `usage.record`): call again with the same `event_key` and the service
   * applies it at most once.
   */
  declare readonly event_key?: string | undefined;

  /** `instanceof` by brand: true for errors of this class made by any copy of the package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class on the right of `instanceof` (a subclass inherits this method), so it
    // cannot be spelled `BillingError` here.
    // biome-ignore lint/complexity/noThisInStatic: see above
    const cls = this as unknown as Record<string, string>;
    // A user's own subclass has no brand of its own: only the plain prototype check applies.
    return inChain(value, cls, Object.hasOwn(cls, BRAND) ? cls[BRAND] : undefined);
  }

  /**
   * A plain object for loggers and `JSON.stringify`: the fields, the message (which `Error` keeps
   * non-enumerable) and the cause as one line (causes are scrubbed of the key before they are attached).
   */
  toJSON(): Record<string, unknown> {
    const { cause } = this;
    // An undefined cause disappears in JSON.stringify.
    return {
      ...(this as object),
      name: this.name,
      message: this.message,
      cause: cause instanceof Error ? `${cause.name}: ${cause.message}` : cause,
    };
  }
}

/** `invoices.list (GET /api/invoices/)`: how every request error's message begins. */
export function describeRequest(ctx: RequestContext): string {
  return `${ctx.operation} (${ctx.method} ${ctx.path})`;
}
