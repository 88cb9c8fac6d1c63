/**
 * The cache keys (`generation keyPart account`) of the accounts looked up lately, by account and
 * key part. Built anew per lookup, a key is a new string the LRU's map must flatten and hash (about
 * 200 ns, as much as the rest of a hit); found here, it is the same string as last time, hash
 * included. The account's own hash is already computed by then (its generation was just read).
 *
 * A key is reused only for the generation it was made in: an invalidation moves the account on, and
 * its next lookup makes a new key. Bounded: past `limit` accounts it starts over (keys are only
 * remade, never wrong).
 */
export class HotKeys {
  readonly #byAccount = new Map<string, { generation: number; keys: Map<string, string> }>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Whether `account` had a key made lately (it was checked then: the gate need not check it again). */
  knows(account: string): boolean {
    return this.#byAccount.has(account);
  }

  /** The key of `account`'s answer under `keyPart` in `generation`. */
  key(generation: number, account: string, keyPart: string): string {
    let hot = this.#byAccount.get(account);
    if (hot === undefined || hot.generation !== generation) {
      if (hot === undefined && this.#byAccount.size >= this.#limit) this.#byAccount.clear();
      hot = { generation, keys: new Map() };
      this.#byAccount.set(account, hot);
    }
    let key = hot.keys.get(keyPart);
    if (key === undefined) {
      key = `${generation} ${keyPart}${account}`;
      hot.keys.set(keyPart, key);
    }
    return key;
  }
}
