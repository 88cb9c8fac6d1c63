import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnswerTable, type Slot } from '../../src/access/answer-table.js';

/** A step against the table: a lookup that finds (and uses) or adds a slot, or a slot dropped. */
const step = fc.oneof(
  fc.record({
    kind: fc.constant('look' as const),
    head: fc.constantFrom('status a', 'status b', 'entitlement c'),
    account: fc.constantFrom('acct_1', 'acct_2', 'acct_3', 'acct_4', 'acct_5', 'acct_6'),
  }),
  fc.record({ kind: fc.constant('drop' as const), nth: fc.nat(20) }),
);

describe('the access cache answer table', () => {
  it('property: within max, a slot found until dropped, a drop prefers a slot nobody used since the last round', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), fc.array(step, { maxLength: 80 }), (max, steps) => {
        const table = new AnswerTable<string>(max);
        // The model: every slot the table should still hold, by head and account.
        const kept = new Map<string, Slot<string>>();
        for (const s of steps) {
          if (s.kind === 'drop') {
            const slot = [...kept.values()][s.nth % Math.max(1, kept.size)];
            if (!slot) continue;
            table.drop(slot);
            kept.delete(`${slot.head}\n${slot.account}`);
            expect(slot.gone).toBe(true);
            continue;
          }
          const id = `${s.head}\n${s.account}`;
          const found = table.get(s.head, s.account);
          expect(found).toBe(kept.get(id));
          if (found) {
            found.used = true;
            continue;
          }
          const unusedBefore = [...kept.values()].filter((slot) => !slot.used);
          const added = table.add(s.head, s.account, 0);
          kept.set(id, added);
          const dropped = [...kept.entries()].filter(([, slot]) => slot.gone);
          // At most one slot goes per add, never the one just added, and only past max.
          expect(dropped.length).toBe(kept.size - 1 === max ? 1 : 0);
          for (const [key, slot] of dropped) {
            expect(slot).not.toBe(added);
            // When some slot went unused since the last round, the one dropped is such a slot.
            if (unusedBefore.length) expect(unusedBefore).toContain(slot);
            kept.delete(key);
          }
          expect(table.size).toBe(kept.size);
          expect(table.size).toBeLessThanOrEqual(max);
        }
        for (const [id, slot] of kept) {
          const [head = '', account = ''] = id.split('\n');
          expect(table.get(head, account)).toBe(slot);
        }
      }),
    );
  });

  it('a slot used since the last round outlives one that was not', () => {
    const table = new AnswerTable<string>(2);
    const a = table.add('q', 'a', 0);
    const b = table.add('q', 'b', 0);
    // Neither was read again since it was added: the oldest, a, goes.
    table.add('q', 'c', 0);
    expect([a.gone, b.gone]).toEqual([true, false]);
    // b is read again; c is not: the next one added pushes c out, not b.
    b.used = true;
    table.add('q', 'd', 0);
    expect(table.get('q', 'b')).toBe(b);
    expect(table.get('q', 'c')).toBeUndefined();
  });

  it('clear() forgets every slot, and a question with no slot left leaves nothing behind', () => {
    const table = new AnswerTable<string>(10);
    const slots = ['a', 'b', 'c'].map((account) => table.add('q', account, 0));
    table.drop(slots[0] as Slot<string>);
    expect(table.size).toBe(2);
    table.clear();
    expect(table.size).toBe(0);
    expect(slots.every((slot) => slot.gone)).toBe(true);
    expect(table.get('q', 'b')).toBeUndefined();
  });

  it('fill: one refresh per slot; a failed first one leaves nothing, a late one of a moved slot stores nothing', async () => {
    const table = new AnswerTable<string>(10);
    const slot = table.add('q', 'a', 0);
    await expect(table.fill(slot, Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(slot.gone).toBe(true);
    expect(table.size).toBe(0);

    const kept = table.add('q', 'b', 0);
    await table.fill(kept, Promise.resolve('yes'));
    await expect(table.fill(kept, Promise.reject(new Error('down')))).rejects.toThrow('down');
    // A failed refresh keeps the old answer.
    expect([kept.entry, kept.gone]).toEqual(['yes', false]);

    // An invalidation moves the slot on while its refresh runs: that answer is not kept.
    let answer: (value: string) => void = () => {};
    const late = table.fill(kept, new Promise<string>((resolve) => (answer = resolve)));
    Object.assign(kept, { gen: 1, entry: undefined, pending: undefined });
    answer('old');
    await expect(late).resolves.toBe('old');
    expect(kept.entry).toBeUndefined();
  });
});
