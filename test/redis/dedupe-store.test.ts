import { describe, expect, it } from 'vitest';
import { createWebhookHandler, isBillingError, memoryDedupeStore, StoreError } from '../../src/index.js';
import { type RedisLike, redisDedupeStore } from '../../src/redis/index.js';
import { caught } from '../helpers.js';
import { event } from '../webhooks/event.js';
import { connectRedis, uniquePrefix, useRedisClient } from './connect.js';
import { dedupeContract } from './dedupe-contract.js';
import { startRedisServer, useRedisServer } from './redis-server.js';

const redis = useRedisServer();
const connected = useRedisClient(redis);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

dedupeContract('memoryDedupeStore', async () => {
  let now = 0;
  const store = memoryDedupeStore({ now: () => now });
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
});

dedupeContract('redisDedupeStore', async () => ({
  store: redisDedupeStore(connected.client, { prefix: uniquePrefix('dedupe') }),
  advance: sleep,
}));

describe('redisDedupeStore in Redis', () => {
  it('keeps one key per id: the claim token with the claim TTL, then done with doneTtlMs', async () => {
    const prefix = uniquePrefix('keys');
    const store = redisDedupeStore(connected.client, { prefix, doneTtlMs: 3_600_000 });
    await store.claim('tx-1', 'token-1', 30_000);
    expect(await connected.client.get(`${prefix}tx-1`)).toBe('claim:token-1');
    const claimTtl = await connected.client.pTTL(`${prefix}tx-1`);
    expect(claimTtl).toBeGreaterThan(25_000);
    expect(claimTtl).toBeLessThanOrEqual(30_000);
    await store.complete('tx-1', 'token-1');
    expect(await connected.client.get(`${prefix}tx-1`)).toBe('done:claim:token-1');
    expect(await connected.client.pTTL(`${prefix}tx-1`)).toBeGreaterThan(3_500_000);
  });

  it('each step run twice (a resend after a lost answer) answers as the first run did', async () => {
    const store = redisDedupeStore(connected.client, { prefix: uniquePrefix('twice') });
    expect(await store.claim('tx', 't', 30_000)).toBe('claimed');
    expect(await store.claim('tx', 't', 30_000)).toBe('claimed');
    expect(await store.renew('tx', 't', 30_000)).toBe(true);
    expect(await store.renew('tx', 't', 30_000)).toBe(true);
    expect(await store.complete('tx', 't')).toBe(true);
    expect(await store.complete('tx', 't')).toBe(true);
    // Another token's complete after it is told the claim was not its own.
    expect(await store.complete('tx', 'u')).toBe(false);
    expect(await store.claim('tx', 'v', 30_000)).toBe('done');
    expect(await store.claim('tx2', 't', 30_000)).toBe('claimed');
    await store.release('tx2', 't');
    await store.release('tx2', 't');
    expect(await store.claim('tx2', 'u', 30_000)).toBe('claimed');
  });

  it('a token that reads "done" cannot pass for the done mark', async () => {
    const store = redisDedupeStore(connected.client, { prefix: uniquePrefix('done-token') });
    expect(await store.claim('tx', 'done', 30_000)).toBe('claimed');
    expect(await store.claim('tx', 'other', 30_000)).toBe('processing');
  });

  it('works with an ioredis-style adapter over the same connection', async () => {
    const adapter: RedisLike = { sendCommand: (args) => connected.client.sendCommand(args) };
    const store = redisDedupeStore(adapter, { prefix: uniquePrefix('adapter') });
    expect(await store.claim('tx', 't', 30_000)).toBe('claimed');
    expect(await store.complete('tx', 't')).toBe(true);
    expect(await store.claim('tx', 'u', 30_000)).toBe('done');
  });
});

describe('redisDedupeStore when Redis fails: the handler fails closed', () => {
  const post = (handler: (r: Request) => Promise<Response>, body: string) =>
    handler(new Request('http://x/', { method: 'POST', body }));

  it('a client that rejects: 500, onEvent never runs, onError is told', async () => {
    const broken: RedisLike = { sendCommand: () => Promise.reject(new Error('ECONNREFUSED')) };
    let calls = 0;
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      onEvent: () => void calls++,
      dedupe: redisDedupeStore(broken),
      onError: (error) => void errors.push(error),
    });
    const response = await post(handler, JSON.stringify(event()));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: 'dedupe store failed' });
    expect(calls).toBe(0);
    expect(String(errors[0])).toContain('ECONNREFUSED');
  });

  it('a client that never answers: 500 after timeoutMs, onEvent never runs', async () => {
    const hung: RedisLike = { sendCommand: () => new Promise(() => {}) };
    let calls = 0;
    const handler = createWebhookHandler({
      onEvent: () => void calls++,
      dedupe: redisDedupeStore(hung, { timeoutMs: 50 }),
    });
    expect((await post(handler, JSON.stringify(event()))).status).toBe(500);
    expect(calls).toBe(0);
  });

  it('a real node-redis client whose server went away (commands queue while it reconnects): 500, no onEvent', async () => {
    const doomed = await startRedisServer();
    const lost = await connectRedis(doomed.url);
    try {
      const store = redisDedupeStore(lost, { timeoutMs: 300 });
      let calls = 0;
      const handler = createWebhookHandler({ onEvent: () => void calls++, dedupe: store });
      const body = JSON.stringify(event());
      expect((await post(handler, body)).status).toBe(200);
      await doomed.stop();
      const again = JSON.stringify(event());
      expect((await post(handler, again)).status).toBe(500);
      expect(calls).toBe(1);
    } finally {
      lost.destroy();
      await doomed.stop();
    }
  });

  it('a claim that succeeded but whose complete fails: 500, and the retry gets 409 while the claim lives', async () => {
    const prefix = uniquePrefix('complete-fails');
    const real = redisDedupeStore(connected.client, { prefix });
    let calls = 0;
    const handler = createWebhookHandler({
      onEvent: () => void calls++,
      dedupe: { ...real, complete: () => Promise.reject(new Error('store down')) },
    });
    const body = JSON.stringify(event());
    expect((await post(handler, body)).status).toBe(500);
    const retry = await post(handler, body);
    expect(retry.status).toBe(409);
    expect(retry.headers.get('retry-after')).toBe('60');
    expect(calls).toBe(1);
  });
});

describe('redisDedupeStore failures are typed: a StoreError with its code, as the handler’s onError gets it', () => {
  const post = (handler: (r: Request) => Promise<Response>, body: string) =>
    handler(new Request('http://x/', { method: 'POST', body }));
  /** A handler on `store` that records what its onError is told. */
  const handlerOn = (store: ReturnType<typeof redisDedupeStore>) => {
    const errors: unknown[] = [];
    let calls = 0;
    const handler = createWebhookHandler({
      onEvent: () => void calls++,
      dedupe: store,
      onError: (error) => void errors.push(error),
    });
    return { handler, errors, calls: () => calls };
  };

  it('a Redis killed (SIGKILL): 500, and onError gets StoreError unavailable naming the step, the client’s error as cause', async () => {
    const doomed = await startRedisServer();
    const lost = await connectRedis(doomed.url);
    try {
      const { handler, errors, calls } = handlerOn(redisDedupeStore(lost, { timeoutMs: 300 }));
      expect((await post(handler, JSON.stringify(event()))).status).toBe(200);
      await doomed.kill();
      expect((await post(handler, JSON.stringify(event()))).status).toBe(500);
      expect(calls()).toBe(1);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(StoreError);
      expect(isBillingError(errors[0], 'StoreError') && errors[0].code).toBe('unavailable');
      expect(String(errors[0])).toMatch(/^StoreError: redisDedupeStore\.claim: Redis failed: /);
      expect((errors[0] as StoreError).cause).toBeInstanceOf(Error);
    } finally {
      lost.destroy();
      await doomed.stop();
    }
  });

  it('a client that never answers: StoreError unavailable after timeoutMs', async () => {
    const store = redisDedupeStore({ sendCommand: () => new Promise(() => {}) }, { timeoutMs: 30 });
    const error = await caught(() => store.claim('tx', 't', 1_000));
    expect(isBillingError(error, 'StoreError') && error.code).toBe('unavailable');
    expect(String(error)).toContain(
      'redisDedupeStore.claim: Redis failed: Redis did not answer within 30 ms',
    );
  });

  it('a key of another type under the id (put there by hand): StoreError unexpected_reply, onEvent not run', async () => {
    const prefix = uniquePrefix('wrong-type');
    const body = event();
    await connected.client.hSet(`${prefix}${body.transaction_id}`, 'not', 'ours');
    const { handler, errors, calls } = handlerOn(redisDedupeStore(connected.client, { prefix }));
    expect((await post(handler, JSON.stringify(body))).status).toBe(500);
    expect(calls()).toBe(0);
    expect(isBillingError(errors[0], 'StoreError') && errors[0].code).toBe('unexpected_reply');
    expect(String(errors[0])).toContain('WRONGTYPE');
  });

  it('a reply of another shape (an odd adapter): StoreError unexpected_reply, not a TypeError', async () => {
    const store = redisDedupeStore({ sendCommand: async () => 'OK' });
    const error = await caught(() => store.claim('tx', 't', 1_000));
    expect(isBillingError(error, 'StoreError') && error.code).toBe('unexpected_reply');
    expect(String(error)).toBe('StoreError: redisDedupeStore.claim: unexpected Redis reply "OK"');
  });
});
