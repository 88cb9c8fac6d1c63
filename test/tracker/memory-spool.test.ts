import { describe, expect, it } from 'vitest';
import { memorySpool } from '../../src/tracker/memory-spool.js';
import type { Spool } from '../../src/tracker/spool.js';
import { spoolContract, spooledEvent } from './spool-contract.js';

spoolContract('memorySpool', () => memorySpool());

// The contract's durable branch, on a memory spool reopened in place (it hands what is left after
// close + open): proves the branch itself, which the durable spools rely on.
const byPlace = new Map<string, Spool>();
spoolContract('memorySpool reopened in place', (place) => {
  const spool = byPlace.get(place) ?? memorySpool();
  byPlace.set(place, spool);
  return { ...spool, durable: true };
});

describe('memorySpool', () => {
  it('is not durable', () => {
    expect(memorySpool().durable).toBe(false);
  });

  it('the same object opened again hands what was not acknowledged first, then new entries', async () => {
    const spool = memorySpool();
    await spool.open();
    const ids = await spool.append([spooledEvent(0), spooledEvent(1), spooledEvent(2)]);
    await spool.take(2);
    await spool.ack([ids[0] as string]);
    await spool.close();
    await spool.open();
    const fresh = await spool.append([spooledEvent(3)]);
    expect((await spool.take(10)).map((e) => e.id)).toEqual([ids[1], ids[2], ...fresh]);
  });
});
