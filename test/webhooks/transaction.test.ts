import { describe, expect, it } from 'vitest';
import {
  createNodeWebhookHandler,
  createWebhookHandler,
  type DedupeStore,
  InvalidRequestError,
  memoryDedupeStore,
  type TransactionOutcome,
  type WebhookEventContext,
} from '../../src/index.js';
import { caught } from '../helpers.js';
import { event } from './event.js';

// How the handlers drive a store with runInTransaction (postgresDedupeStore's shape), against a
// memory store with a fake transaction: onEvent runs inside it, in place of complete.

const send = (handler: (request: Request) => Promise<Response>, body: string) =>
  handler(new Request('http://x/', { method: 'POST', body }));

/** A memory store plus a runInTransaction that marks done only when fn resolved, recording calls. */
function transactionalStore(answer?: () => Promise<TransactionOutcome>) {
  const inner = memoryDedupeStore();
  const calls: string[] = [];
  const transactions: { id: string; committed: boolean }[] = [];
  const store: DedupeStore = {
    claim: (id, token, ttlMs) => inner.claim(id, token, ttlMs),
    renew: (id, token, ttlMs) => inner.renew(id, token, ttlMs),
    complete: (id, token) => {
      calls.push('complete');
      return inner.complete(id, token);
    },
    release: (id, token) => {
      calls.push('release');
      return inner.release(id, token);
    },
    async runInTransaction(id, token, fn) {
      calls.push('runInTransaction');
      if (answer) return answer();
      const transaction = { id, committed: false };
      transactions.push(transaction);
      await fn(transaction);
      await inner.complete(id, token);
      transaction.committed = true;
      return 'committed';
    },
  };
  return { store, calls, transactions };
}

describe('a dedupe store with runInTransaction', () => {
  it('onEvent gets { transaction } from the store, runs inside it, and complete is never called', async () => {
    const { store, calls, transactions } = transactionalStore();
    const seen: WebhookEventContext[] = [];
    const handler = createWebhookHandler({
      dedupe: store,
      onEvent: (_e, context) => void seen.push(context),
    });
    const body = JSON.stringify(event());
    expect((await send(handler, body)).status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.transaction).toBe(transactions[0]);
    expect(transactions[0]?.committed).toBe(true);
    expect(calls).toEqual(['runInTransaction']);
    // Done: the redelivery is acknowledged without a second run.
    expect((await send(handler, body)).status).toBe(200);
    expect(seen).toHaveLength(1);
  });

  it('onEvent throwing: 500 "event handler failed", the claim released, onError gets onEvent’s error; the retry runs it', async () => {
    const { store, calls } = transactionalStore();
    const errors: unknown[] = [];
    let runs = 0;
    const boom = new Error('boom');
    const handler = createWebhookHandler({
      dedupe: store,
      onEvent: () => {
        if (++runs === 1) throw boom;
      },
      onError: (error) => void errors.push(error),
    });
    const body = JSON.stringify(event());
    const failed = await send(handler, body);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: 'event handler failed' });
    expect(errors).toEqual([boom]);
    expect(calls).toEqual(['runInTransaction', 'release']);
    expect((await send(handler, body)).status).toBe(200);
    expect(runs).toBe(2);
  });

  it('"done" (another receiver committed first): 200, nothing released', async () => {
    const { store, calls } = transactionalStore(async () => 'done');
    const handler = createWebhookHandler({ dedupe: store, onEvent: () => {} });
    expect((await send(handler, JSON.stringify(event()))).status).toBe(200);
    expect(calls).toEqual(['runInTransaction']);
  });

  it('"processing" (another receiver’s transaction still open): 409 with Retry-After, the claim released', async () => {
    const { store, calls } = transactionalStore(async () => 'processing');
    const handler = createWebhookHandler({ dedupe: store, onEvent: () => {}, claimTtlMs: 5_000 });
    const body = JSON.stringify(event());
    const busy = await send(handler, body);
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('5');
    expect(calls).toEqual(['runInTransaction', 'release']);
    // Released: the next delivery claims it at once rather than waiting out the TTL.
    expect(await store.claim(JSON.parse(body).transaction_id, 'other', 1_000)).toBe('claimed');
  });

  it('the store failing (not onEvent): 500 "dedupe store failed" with the store’s error, the claim released', async () => {
    const down = new Error('database down');
    const { store, calls } = transactionalStore(() => Promise.reject(down));
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      dedupe: store,
      onEvent: () => {},
      onError: (error) => void errors.push(error),
    });
    const answer = await send(handler, JSON.stringify(event()));
    expect(answer.status).toBe(500);
    expect(await answer.json()).toEqual({ error: 'dedupe store failed' });
    expect(errors).toEqual([down]);
    expect(calls).toEqual(['runInTransaction', 'release']);
  });

  it('an answer outside the contract: 500 with a TypeError naming it, the claim released', async () => {
    const { store, calls } = transactionalStore(async () => 'yes' as TransactionOutcome);
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      dedupe: store,
      onEvent: () => {},
      onError: (error) => void errors.push(error),
    });
    expect((await send(handler, JSON.stringify(event()))).status).toBe(500);
    expect(String(errors[0])).toBe('TypeError: dedupe.runInTransaction answered yes');
    expect(calls).toEqual(['runInTransaction', 'release']);
  });

  it('a failing release after a failed onEvent is told to onError; the answer stays 500', async () => {
    const { store } = transactionalStore();
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      dedupe: { ...store, release: () => Promise.reject(new Error('release failed')) },
      onEvent: () => {
        throw new Error('boom');
      },
      onError: (error) => void errors.push(error),
    });
    expect((await send(handler, JSON.stringify(event()))).status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(errors.map(String).sort()).toEqual(['Error: boom', 'Error: release failed']);
  });

  it('createNodeWebhookHandler passes the transaction too', async () => {
    const { store, transactions } = transactionalStore();
    const seen: unknown[] = [];
    const handler = createNodeWebhookHandler({
      dedupe: store,
      onEvent: (_e, { transaction }) => void seen.push(transaction),
    });
    const answer = await new Promise<{ status: number; body: string }>((resolve) => {
      const res = {
        statusCode: 0,
        setHeader: () => {},
        end: (body?: string) => resolve({ status: res.statusCode, body: body ?? '' }),
      };
      handler({ method: 'POST', headers: {}, body: JSON.stringify(event()), on: () => {} }, res);
    });
    expect(answer).toEqual({ status: 200, body: '{"received":true}' });
    expect(seen).toEqual([transactions[0]]);
  });

  it('runInTransaction that is not a function: InvalidRequestError naming options.dedupe', async () => {
    const dedupe = { ...memoryDedupeStore(), runInTransaction: 'yes' } as unknown as DedupeStore;
    const error = await caught(() => createWebhookHandler({ dedupe, onEvent: () => {} }));
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(String(error)).toContain('options.dedupe');
    expect(String(error)).toContain('runInTransaction');
  });
});

describe('stores without runInTransaction: onEvent unchanged', () => {
  it('gets {} as its second argument (no transaction), and complete marks the id done', async () => {
    const contexts: unknown[] = [];
    const handler = createWebhookHandler({ onEvent: (_e, context) => void contexts.push(context) });
    const body = JSON.stringify(event());
    expect((await send(handler, body)).status).toBe(200);
    expect((await send(handler, body)).status).toBe(200);
    expect(contexts).toEqual([{}]);
  });

  it('a one-argument onEvent, as written before, still type-checks and runs', async () => {
    const ids: string[] = [];
    const onEvent = (e: { transaction_id: string }) => void ids.push(e.transaction_id);
    const handler = createWebhookHandler({ onEvent });
    const e = event();
    expect((await send(handler, JSON.stringify(e))).status).toBe(200);
    expect(ids).toEqual([e.transaction_id]);
  });
});
