import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DedupeStore } from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { until } from '../helpers.js';
import {
  A,
  AI,
  ask,
  credits,
  DEBIT_PATH,
  EMPTY,
  echoed,
  expectProblem,
  FRAMEWORKS,
  pause,
  servers,
} from './helpers.js';

/**
 * The Idempotency-Key rule through every adapter, with the keys in the stores `pair()` gives: two
 * stores on one backing (one object in memory; two over one Redis or PostgreSQL), one per gate
 * instance, fresh for each test.
 */
export function idempotencyCases(
  label: string,
  mock: { readonly server: MockServer },
  pair: () => Promise<readonly [DedupeStore, DedupeStore]>,
): void {
  const balance = (account: string = A) => mock.server.store.balance(account, AI, 'credits');
  const debits = () => mock.server.requests.count({ method: 'POST', path: DEBIT_PATH });
  const newKey = () => `key-${randomUUID()}`;
  /**
   * Asks as a client honouring a 409's Retry-After would (briefly): under Express and Fastify the
   * key is marked once the previous answer was sent, a moment after the client read it.
   */
  const settled = async (...args: Parameters<typeof ask>) => {
    for (let i = 0; ; i++) {
      const answer = await ask(...args);
      if (answer.status !== 409 || i === 100) return answer;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  describe.each(FRAMEWORKS)(`Idempotency-Key through $name (${label})`, (framework) => {
    const start = servers(framework, mock);
    /** Two gate instances of one route on the same store: what a second process is. */
    const instances = async (quantities: readonly [number, number] = [5, 5]) => {
      const [first, second] = await pair();
      return [
        await start({ need: credits(quantities[0]) }, { idempotency: { store: first } }),
        await start({ need: credits(quantities[1]) }, { idempotency: { store: second } }),
      ] as const;
    };

    it('a key reused after its request succeeded is refused 422, on either instance: one run, one debit', async () => {
      const [one, two] = await instances();
      const key = newKey();
      const first = await ask(one, { account: A, idempotencyKey: key });
      expect(first.status).toBe(200);
      expectProblem(await settled(one, { account: A, idempotencyKey: key }), 422, 'idempotency_key_used');
      expectProblem(await settled(two, { account: A, idempotencyKey: key }), 422, 'idempotency_key_used');
      expect(one.handled + two.handled).toBe(1);
      expect(balance()).toBe(995);
      expect(debits()).toBe(1);
      if (framework.seesDecision) expect(echoed(first)?.debit?.event_key).not.toBe(key);
    });

    it("another account's key is its own: an account without credits is refused 402 with its own balance", async () => {
      const [one] = await instances();
      const key = newKey();
      expect((await ask(one, { account: A, idempotencyKey: key })).status).toBe(200);
      const other = await settled(one, { account: EMPTY, idempotencyKey: key });
      const body = expectProblem(other, 402, 'insufficient_credits');
      expect(body.remaining_balance).toBe(balance(EMPTY));
      expect(body.remaining_balance).not.toBe(995);
      expect(one.handled).toBe(1);
      expect(balance()).toBe(995);
    });

    it('a key of one route sent to another route is refused 422: the second action is never free', async () => {
      const [five, ten] = await instances([5, 10]);
      const key = newKey();
      expect((await ask(five, { account: A, idempotencyKey: key })).status).toBe(200);
      expectProblem(await settled(ten, { account: A, idempotencyKey: key }), 422, 'idempotency_key_mismatch');
      expect(ten.handled).toBe(0);
      expect(balance()).toBe(995);
    });

    it('after a failure (a 500, a throw) the retry runs again, on either instance, and is charged once', async () => {
      const [one, two] = await instances();
      const key = newKey();
      expect((await ask(one, { account: A, idempotencyKey: key, status: 500 })).status).toBe(500);
      expect((await settled(two, { account: A, idempotencyKey: key, throws: true })).status).toBe(500);
      const retry = await settled(one, { account: A, idempotencyKey: key });
      expect(retry.status).toBe(200);
      expect(one.handled + two.handled).toBe(3);
      expect(balance()).toBe(995);
      expect(mock.server.store.ledger.size).toBe(1);
      // Its key is used now.
      expectProblem(await settled(two, { account: A, idempotencyKey: key }), 422, 'idempotency_key_used');
    });

    it('a key whose request is in flight is refused 409 (with Retry-After) on either instance', async () => {
      const [one, two] = await instances();
      const key = newKey();
      const resume = pause(key);
      const first = ask(one, { account: A, idempotencyKey: key, headers: { 'x-pause': key } });
      await until(() => one.handled === 1);
      for (const s of [one, two]) {
        const busy = await ask(s, { account: A, idempotencyKey: key });
        expectProblem(busy, 409, 'idempotency_key_in_flight');
        expect(busy.headers.get('retry-after')).toBe('1');
      }
      resume();
      expect((await first).status).toBe(200);
      expect(one.handled + two.handled).toBe(1);
      expect(balance()).toBe(995);
    });

    it('a key longer than 255 characters is refused 400 and never sent to the service', async () => {
      const [one] = await instances();
      const long = 'k'.repeat(256);
      expectProblem(await ask(one, { account: A, idempotencyKey: long }), 400, 'idempotency_key_invalid');
      expect((await ask(one, { account: A, idempotencyKey: 'k'.repeat(255) })).status).toBe(200);
      expect(debits()).toBe(1);
      expect([...mock.server.store.ledger.keys()].some((k) => k.includes('kkkk'))).toBe(false);
      expect(one.handled).toBe(1);
    });
  });
}
