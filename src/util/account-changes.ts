/**
 * Within one process, who hears that an account's billing may have changed: the state streams of
 * `gate.state` (src/gate/state-stream.ts). The access cache tells of each invalidation it makes or
 * hears through its shared store (any instance), credit holds and the gate of each debit they make.
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
