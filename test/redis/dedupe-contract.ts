import { describe, expect, it } from 'vitest';
import type { DedupeStore } from '../../src/index.js';

/** A store under test, and how to let time pass for it. */
export interface DedupeSubject {
  store: DedupeStore;
  /** Lets `ms` of the store's time pass (a fake clock moves; for Redis, real time passes). */
  advance(ms: number): Promise<void>;
}

/** Long enough that no test, however slow the machine, sees it expire. */
const LONG = 60_000;
/**
 * Short enough to wait out in a Redis or Postgres test; the memory store's clock just moves. Long
 * enough that a claim outlives the next statement on a loaded machine (40 ms did not: a clean-clone
 * run saw a pg Client's renew come after its claim had lapsed).
 */
const SHORT = 250;

/**
 * The {@link DedupeStore} contract, run against every store so the in-memory default and the
 * Redis store cannot drift apart.
 */
export function dedupeContract(name: string, subject: () => Promise<DedupeSubject>): void {
  describe(`${name}: the DedupeStore contract`, () => {
    it('claims a fresh id; another token then sees it processing; the holder may claim again', async () => {
      const { store } = await subject();
      expect(await store.claim('a', 't1', LONG)).toBe('claimed');
      expect(await store.claim('a', 't2', LONG)).toBe('processing');
      expect(await store.claim('a', 't1', LONG)).toBe('claimed');
      expect(await store.claim('b', 't2', LONG)).toBe('claimed');
    });

    it('complete makes the id done for every token, for good', async () => {
      const { store, advance } = await subject();
      await store.claim('a', 't1', SHORT);
      expect(await store.complete('a', 't1')).toBe(true);
      expect(await store.claim('a', 't2', LONG)).toBe('done');
      expect(await store.claim('a', 't1', LONG)).toBe('done');
      await advance(SHORT * 2); // the claim's TTL does not apply to the done mark
      expect(await store.claim('a', 't3', LONG)).toBe('done');
      await store.release('a', 't1');
      expect(await store.renew('a', 't1', LONG)).toBe(false);
      expect(await store.claim('a', 't3', LONG)).toBe('done');
    });

    it('complete may keep an answer with the done mark (the gate replay): answer reads it, none for a plain one', async () => {
      const { store } = await subject();
      await store.claim('a', 't1', LONG);
      const answer = '{"status":200,"body":"é\\n ok"}';
      expect(await store.complete('a', 't1', answer)).toBe(true);
      await store.claim('b', 't1', LONG);
      await store.complete('b', 't1');
      await store.claim('c', 't1', LONG);
      expect(await store.answer?.('a')).toBe(answer);
      expect(await store.answer?.('b')).toBeUndefined();
      expect(await store.answer?.('c')).toBeUndefined(); // claimed, not done
      expect(await store.answer?.('d')).toBeUndefined();
      expect(await store.claim('a', 't2', LONG)).toBe('done');
    });

    it('release frees the id for the next claim', async () => {
      const { store } = await subject();
      await store.claim('a', 't1', LONG);
      await store.release('a', 't1');
      expect(await store.claim('a', 't2', LONG)).toBe('claimed');
    });

    it('a claim expires after its TTL, and another token may claim it', async () => {
      const { store, advance } = await subject();
      expect(await store.claim('a', 't1', SHORT)).toBe('claimed');
      await advance(SHORT + 10);
      expect(await store.claim('a', 't2', LONG)).toBe('claimed');
      expect(await store.claim('a', 't1', LONG)).toBe('processing');
    });

    it('renew extends the claim of the token that holds it, and only that one', async () => {
      const { store, advance } = await subject();
      await store.claim('a', 't1', SHORT);
      expect(await store.renew('a', 't1', LONG)).toBe(true);
      await advance(SHORT + 10);
      expect(await store.claim('a', 't2', LONG)).toBe('processing');
      expect(await store.renew('a', 't2', LONG)).toBe(false);
      expect(await store.renew('missing', 't1', LONG)).toBe(false);
    });

    it('token safety: a holder whose claim expired cannot release or renew the new holder’s claim', async () => {
      const { store, advance } = await subject();
      await store.claim('a', 'stale', SHORT);
      await advance(SHORT + 10);
      expect(await store.claim('a', 'live', LONG)).toBe('claimed');
      await store.release('a', 'stale');
      expect(await store.renew('a', 'stale', LONG)).toBe(false);
      expect(await store.claim('a', 'third', LONG)).toBe('processing');
    });

    it('a stale holder’s complete still records the event done (it was processed), answering false', async () => {
      const { store, advance } = await subject();
      await store.claim('a', 'stale', SHORT);
      await advance(SHORT + 10);
      await store.claim('a', 'live', LONG);
      expect(await store.complete('a', 'stale')).toBe(false);
      // The live holder's run then fails: releasing must not undo the done mark.
      await store.release('a', 'live');
      expect(await store.claim('a', 'third', LONG)).toBe('done');
    });

    it('complete after the claim expired and nobody took it over records done, answering false', async () => {
      const { store, advance } = await subject();
      await store.claim('a', 't1', SHORT);
      await advance(SHORT + 10);
      expect(await store.complete('a', 't1')).toBe(false);
      expect(await store.claim('a', 't2', LONG)).toBe('done');
    });

    it('ids are independent, whatever characters they hold', async () => {
      const { store } = await subject();
      const ids = ['tx-1', 'tx-1 ', '__proto__', 'a:b{c}', 'ünï', ''];
      for (const id of ids) expect(await store.claim(id, 't1', LONG)).toBe('claimed');
      await store.complete('tx-1', 't1');
      expect(await store.claim('tx-1 ', 't2', LONG)).toBe('processing');
      expect(await store.claim('tx-1', 't2', LONG)).toBe('done');
    });

    it('concurrent claims of one id by many tokens: exactly one wins', async () => {
      const { store } = await subject();
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => Promise.resolve(store.claim('race', `t${i}`, LONG))),
      );
      expect(outcomes.filter((o) => o === 'claimed')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'processing')).toHaveLength(19);
    });
  });
}
