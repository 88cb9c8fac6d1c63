import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryDedupeStore } from '../../src/index.js';

// Whatever order claims, renewals, completions, releases and the passing of time come in, the
// memory store never lets two tokens hold a live claim on one id, and a done id stays done.

const ids = ['a', 'b'];
const tokens = ['t1', 't2', 't3'];
const step = fc.oneof(
  fc.record({
    op: fc.constantFrom('claim' as const, 'renew' as const),
    id: fc.constantFrom(...ids),
    token: fc.constantFrom(...tokens),
    ttl: fc.integer({ min: 1, max: 100 }),
  }),
  fc.record({
    op: fc.constantFrom('complete' as const, 'release' as const),
    id: fc.constantFrom(...ids),
    token: fc.constantFrom(...tokens),
  }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120 }) }),
);

describe('memoryDedupeStore, any interleaving', () => {
  it('never two live claims on one id; done is final; claimed means the token holds it', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), (steps, max) => {
        let now = 0;
        // max as low as 1: the bound must give way rather than drop a live claim.
        const store = memoryDedupeStore({ max: max + ids.length, now: () => now });
        /** The model: per id, the token believed to hold it and until when, or done. */
        const held = new Map<string, { token: string; until: number } | 'done'>();
        for (const s of steps) {
          if (s.op === 'advance') {
            now += s.ms;
            continue;
          }
          const mine = held.get(s.id);
          const liveOther =
            mine !== undefined && mine !== 'done' && mine.until > now && mine.token !== s.token;
          if (s.op === 'claim') {
            const outcome = store.claim(s.id, s.token, s.ttl);
            if (mine === 'done') expect(outcome).toBe('done');
            else if (liveOther) expect(outcome).toBe('processing');
            else expect(outcome).toBe('claimed');
            if (outcome === 'claimed') held.set(s.id, { token: s.token, until: now + s.ttl });
          } else if (s.op === 'renew') {
            const renewed = store.renew(s.id, s.token, s.ttl);
            const mineLive =
              mine !== undefined && mine !== 'done' && mine.until > now && mine.token === s.token;
            expect(renewed).toBe(mineLive);
            if (renewed) held.set(s.id, { token: s.token, until: now + s.ttl });
          } else if (s.op === 'complete') {
            store.complete(s.id, s.token);
            held.set(s.id, 'done');
          } else {
            store.release(s.id, s.token);
            if (mine !== undefined && mine !== 'done' && mine.token === s.token) held.delete(s.id);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
