import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DedupeStore } from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import {
  A,
  AI,
  type Answer,
  ask,
  credits,
  DEBIT_PATH,
  expectProblem,
  FRAMEWORKS,
  servers,
} from './helpers.js';

/**
 * `idempotency.replay` through every adapter, with the keys in the stores `pair()` gives (two
 * stores on one backing, one per gate instance): a used key's answer is sent again by either
 * instance, its handler run once and charged once.
 */
export function replayCases(
  label: string,
  mock: { readonly server: MockServer },
  pair: () => Promise<readonly [DedupeStore, DedupeStore]>,
  /** `'shared'`: only what a shared store changes (the replay and the retry across instances). */
  which: 'all' | 'shared' = 'all',
): void {
  const balance = () => mock.server.store.balance(A, AI, 'credits');
  const debits = () => mock.server.requests.count({ method: 'POST', path: DEBIT_PATH });
  const newKey = () => `key-${randomUUID()}`;
  /** Under Express and Fastify the key is marked once the answer was sent: a 409 is asked again. */
  const settled = async (...args: Parameters<typeof ask>) => {
    for (let i = 0; ; i++) {
      const answer = await ask(...args);
      if (answer.status !== 409 || i === 100) return answer;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const expectReplay = (again: Answer, first: Answer) => {
    expect(again.status).toBe(first.status);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(first.headers.get('idempotent-replayed')).toBeNull();
  };

  describe.each(FRAMEWORKS)(`idempotency.replay through $name (${label})`, (framework) => {
    const start = servers(framework, mock);
    const instances = async (replay: true | { maxBytes: number } = true) => {
      const [first, second] = await pair();
      return [
        await start({ need: credits(5) }, { idempotency: { store: first, replay } }),
        await start({ need: credits(5) }, { idempotency: { store: second, replay } }),
      ] as const;
    };

    it('a used key gets its answer (2xx or 4xx) again, with Idempotent-Replayed, on either instance: one run, one debit', async () => {
      const [one, two] = await instances();
      const key = newKey();
      const first = await ask(one, { account: A, idempotencyKey: key, status: 201 });
      expect(first.status).toBe(201);
      expectReplay(await settled(two, { account: A, idempotencyKey: key, status: 201 }), first);
      expectReplay(await settled(one, { account: A, idempotencyKey: key, status: 201 }), first);
      expect(one.handled + two.handled).toBe(1);
      expect(debits()).toBe(1);
      expect(balance()).toBe(995);
      // A 4xx is an answer like any other below 500: kept, and its key never run again.
      const other = newKey();
      const missing = await ask(two, { account: A, idempotencyKey: other, status: 404 });
      expect(missing.status).toBe(404);
      expectReplay(await settled(one, { account: A, idempotencyKey: other, status: 404 }), missing);
      expect(one.handled + two.handled).toBe(2);
    });

    // Not a store's matter (the answer is measured before any store sees it): asked once, with 'all'.
    if (which === 'all')
      it('a body over maxBytes is not kept: the key is used, 422 as without replay', async () => {
        const [one, two] = await instances({ maxBytes: 8 });
        const key = newKey();
        const first = await ask(one, { account: A, idempotencyKey: key });
        expect(first.text.length).toBeGreaterThan(8);
        expectProblem(await settled(two, { account: A, idempotencyKey: key }), 422, 'idempotency_key_used');
        expect(one.handled + two.handled).toBe(1);
        expect(debits()).toBe(1);
      });

    it('a 5xx is never kept: the retry runs again, charged once, and its own answer is the one replayed', async () => {
      const [one, two] = await instances();
      const key = newKey();
      expect((await ask(one, { account: A, idempotencyKey: key, status: 500 })).status).toBe(500);
      const retry = await settled(two, { account: A, idempotencyKey: key });
      expect(retry.status).toBe(200);
      expectReplay(await settled(one, { account: A, idempotencyKey: key }), retry);
      expect(one.handled + two.handled).toBe(2);
      expect(mock.server.store.ledger.size).toBe(1);
      expect(balance()).toBe(995);
    });
  });
}
