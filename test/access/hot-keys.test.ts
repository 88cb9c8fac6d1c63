import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HotKeys } from '../../src/access/hot-keys.js';

describe('HotKeys', () => {
  it('answers the key the cache would build, for any sequence of lookups (a model: the string itself)', () => {
    const lookup = fc.record({
      generation: fc.nat(3),
      account: fc.constantFrom('a', 'b', 'acct_1', 'x y', ''),
      keyPart: fc.constantFrom('status "pro" null ', 'entitlement "p" "e" ', ''),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(lookup, { maxLength: 40 }), (limit, lookups) => {
        const keys = new HotKeys(limit);
        for (const { generation, account, keyPart } of lookups) {
          expect(keys.key(generation, account, keyPart)).toBe(`${generation} ${keyPart}${account}`);
        }
      }),
    );
  });

  it('knows an account only once a key of it was made', () => {
    const keys = new HotKeys(10);
    expect(keys.knows('acct_1')).toBe(false);
    keys.key(0, 'acct_1', 'p ');
    expect(keys.knows('acct_1')).toBe(true);
    expect(keys.knows('acct_2')).toBe(false);
  });

  it('makes a new key once the account moved to a new generation, and never hands back the old one', () => {
    const keys = new HotKeys(10);
    expect(keys.key(0, 'acct_1', 'p ')).toBe('0 p acct_1');
    expect(keys.key(7, 'acct_1', 'p ')).toBe('7 p acct_1');
    expect(keys.key(7, 'acct_1', 'q ')).toBe('7 q acct_1');
  });
});
