/**
 * Within one process, who hears that an account's billing may have changed: the state streams of
 * `gate.state` (src/gate/state-stream.ts). The access cache tells of each invalidation it makes or
 * hears through its shared store (any instance), a client of each approved debit (see {@link tellDebits}).
 * Keyed by the object that saw it (the cache, the client), so a stream hears only its own gate's
 * cache and client. Nothing is kept for an owner nobody listens to.
 */
const listeners = new WeakMap<object, Set<(account: string | undefined) => void>>();

/**
 * Calls `listener` with each account `owner` tells of (`undefined`: any account may have changed).
 * Returns the function that stops it.
 */
export function watchAccounts(owner: object, listener: (account: string | undefined) => void): () => void {
  let set = listeners.get(owner);
  if (!set) {
    set = new Set();
    listeners.set(owner, set);
  }
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0 && listeners.get(owner) === set) listeners.delete(owner);
  };
}

/** Tells `owner`'s listeners that `account` (or, `undefined`, any account) may have changed; a throw is theirs. */
export function tellAccount(owner: object, account: string | undefined): void {
  const set = listeners.get(owner);
  if (!set) return;
  for (const listener of [...set]) {
    try {
      listener(account);
    } catch {
      // A listener's failure is its own: the others still hear it, and the caller's step stands.
    }
  }
}

/**
 * How many listeners `owner` has: for the SDK's tests, which check that nothing is left listening.
 *
 * @internal
 */
export function listenersOf(owner: object): number {
  return listeners.get(owner)?.size ?? 0;
}

/** The `usage` objects whose debits already tell (one wrapper per client, however many handlers). */
const told = new WeakSet<object>();

/** A client's `usage`, as far as telling needs it (a method, so a client's wider parameters fit). */
interface Debits {
  debit(params: { account_ref_id: string }, ...rest: unknown[]): PromiseLike<{ approved: boolean }>;
}

/**
 * Makes every approved debit on `billing` (the app's own `billing.usage.debit`, and the gate's,
 * credit holds' and the AI meter's, which all call it) tell `billing`'s listeners of its account.
 * Set on that client object alone, not on its class, by `gate.state`: a client nobody shows a state
 * for pays nothing, and the main bundle carries none of it. The call's promise is returned as it
 * was (an `APIPromise`, `.withResponse()` and all); a client whose `usage` cannot be changed (a
 * frozen test double) is left alone: its debits are not heard, and balances show at most
 * `balanceTtlMs` late.
 */
export function tellDebits(billing: { readonly usage: Debits }): void {
  const usage = billing.usage;
  if (told.has(usage)) return;
  const debit = usage.debit;
  const telling: Debits['debit'] = function (this: unknown, params, ...rest) {
    const answer = debit.call(this, params, ...rest);
    const account = params?.account_ref_id;
    // Its own handlers: a failure stays the caller's to handle, and reaches them unchanged. Through
    // Promise.resolve: a test double may answer a plain object, which the gate awaits as well.
    Promise.resolve(answer).then(
      (result) => {
        if (result?.approved && typeof account === 'string') tellAccount(billing, account);
      },
      () => undefined,
    );
    return answer;
  };
  try {
    Object.defineProperty(usage, 'debit', { value: telling, configurable: true, writable: true });
    told.add(usage);
  } catch {
    // Not extensible: nothing is told of the app's own debits on this client.
  }
}
