import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerKey } from '../../src/credits/store.js';
import { InvalidRequestError, isBillingError, StoreError } from '../../src/index.js';
import { type RedisClient, type RedisLike, redisHoldStore } from '../../src/redis/index.js';
import { tagged } from '../../src/redis/keys.js';
import { freshLedger, holdStoreContract } from '../credits/hold-contract.js';
import { holdNamespaceCase } from '../credits/hold-namespace.js';
import { type AnyClient, connectAny } from './clients.js';
import { useCluster } from './cluster.js';
import { connectRedis, uniquePrefix } from './connect.js';
import { startRedisServer, useRedisServer } from './redis-server.js';
import { KINDS } from './targets.js';

// redisHoldStore against real Redis: the HoldStore contract (the one memoryHoldStore answers) on one
// redis-server with node-redis and on a Redis Cluster with node-redis's createCluster and ioredis's
// Cluster, time passing for real; then its options, its arguments and its failures.

const server = useRedisServer();
const ref = useCluster();
const clients = new Map<string, AnyClient>();
/** A second connection per kind: another instance of the service on the same Redis. */
const others = new Map<string, AnyClient>();
beforeAll(async () => {
  for (const kind of KINDS) {
    const nodes = kind.endsWith('-cluster')
      ? ref.cluster.rootNodes
      : [{ host: '127.0.0.1', port: server.server.port }];
    clients.set(kind, await connectAny(kind, nodes));
    others.set(kind, await connectAny(kind, nodes));
  }
}, 30_000);
afterAll(async () => {
  await Promise.all([...clients.values(), ...others.values()].map((c) => c.close()));
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const hold = (quantity: number, ttlMs = 60_000) => ({ id: crypto.randomUUID(), quantity, ttlMs });
const codeOf = (error: unknown) => (isBillingError(error, 'StoreError') ? error.code : error);

/** A client that counts the commands sent through it. */
function counting(client: RedisClient) {
  const counts = { sent: 0 };
  const wrapped: RedisLike = {
    sendCommand(args) {
      counts.sent++;
      return (client as RedisLike).sendCommand(args);
    },
  };
  return { client: wrapped, counts };
}

for (const kind of KINDS) {
  holdStoreContract(`redisHoldStore on ${kind}`, async () => {
    // A loaded machine (a cluster of six nodes on two cores) may answer slowly; no test here times Redis.
    const options = { prefix: uniquePrefix('holds'), timeoutMs: 5_000 };
    return {
      store: redisHoldStore(clients.get(kind)!.client as RedisClient, options),
      other: redisHoldStore(others.get(kind)!.client as RedisClient, options),
      advance: sleep,
    };
  });
}

// Default options: the store's keys are those of every other service on this Redis.
holdNamespaceCase(
  'redisHoldStore on one redis-server, default options',
  async () => redisHoldStore(clients.get('node-redis')!.client as RedisClient),
  async () => {
    const redis = clients.get('node-redis')!.client as RedisLike;
    const keys = (await redis.sendCommand(['KEYS', 'billing-sdk:holds:*'])) as string[];
    const fields = await Promise.all(
      keys.filter((k) => k.endsWith(':a')).map((k) => redis.sendCommand(['HKEYS', k])),
    );
    return JSON.stringify([keys, fields]);
  },
);

describe('redisHoldStore: options and arguments', () => {
  const single = () => clients.get('node-redis')!.client as RedisClient;

  it('refuses bad options in one InvalidRequestError naming each, and a client that is none', () => {
    let error: unknown;
    try {
      redisHoldStore(single(), { prefix: 'a:{}:', timeoutMs: Number.POSITIVE_INFINITY });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field).sort()).toEqual([
      'options.prefix',
      'options.timeoutMs',
    ]);
    expect(() => redisHoldStore(single(), { prefix: '' })).toThrow(/options\.prefix/);
    expect(() => redisHoldStore(single(), { timeoutMs: 0 })).toThrow(/options\.timeoutMs/);
    expect(() => redisHoldStore(single(), { ttlMs: 5 } as never)).toThrow(/options\.ttlMs is not a known/);
    expect(() => redisHoldStore(single(), 'fast' as never)).toThrow(InvalidRequestError);
    expect(() => redisHoldStore({} as never)).toThrow(InvalidRequestError);
    expect(() => redisHoldStore(null as never)).toThrow(InvalidRequestError);
  });

  it('a bad argument rejects with InvalidRequestError and sends nothing', async () => {
    const { client, counts } = counting(single());
    const store = redisHoldStore(client, { prefix: uniquePrefix('args') });
    const ledger = freshLedger();
    const calls = [
      store.reserve({ ...ledger, account: '\uD800' }, hold(1), 1_000),
      store.reserve(null as never, hold(1), 1_000),
      store.reserve(ledger, hold(1.5), 1_000),
      store.reserve(ledger, hold(0), 1_000),
      store.reserve(ledger, hold(1, Number.NaN), 1_000),
      store.reserve(ledger, hold(1), 0),
      store.setBalance(ledger, 1.5, '0:0'),
      store.setBalance(ledger, 10, 42 as never),
      store.settle(ledger, 'id', Number.MAX_SAFE_INTEGER + 2, 1),
      store.settle(ledger, 'id', 5, -1),
      store.release({ ...ledger, meter: 7 } as never, 'id'),
      store.extend(ledger, 'id', 0),
      store.extend(ledger, '\uD800', 1_000),
      store.invalidate(undefined as never),
    ];
    for (const call of calls) await expect(call).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(store.reserve(ledger, hold(0), 1_000)).rejects.toThrow(/hold\.quantity/);
    await expect(store.release({ ...ledger, meter: 7 } as never, 'id')).rejects.toThrow(/ledger\.meter/);
    expect(counts.sent).toBe(0);
  });

  it('an account’s keys expire: each write gives them at least a day, plus the ttl of a hold granted', async () => {
    const prefix = uniquePrefix('expiry');
    const c = clients.get('node-redis')!;
    const store = redisHoldStore(c.client as RedisClient, { prefix });
    const ledger = freshLedger();
    const first = await store.reserve(ledger, hold(1), 60_000);
    if (first.status !== 'stale') throw new Error('expected stale');
    await store.setBalance(ledger, 10, first.fence);
    await store.reserve(ledger, hold(1, 2 * 60 * 60 * 1000), 60_000);
    const base = tagged(prefix, ledger.account);
    const day = 24 * 60 * 60 * 1000;
    const account = Number(await c.command(['PTTL', `${base}:a`]));
    const holds = Number(await c.command(['PTTL', `${base}:h:${ledgerKey(ledger)}`]));
    for (const ttl of [account, holds]) {
      expect(ttl).toBeGreaterThan(day + 60 * 60 * 1000);
      expect(ttl).toBeLessThanOrEqual(day + 2 * 60 * 60 * 1000);
    }
  });
});

describe('redisHoldStore failures are typed: a StoreError, so a reservation never fails open', () => {
  it('a Redis killed (SIGKILL): every method rejects with StoreError unavailable naming the step', async () => {
    const doomed = await startRedisServer();
    const lost = await connectRedis(doomed.url);
    const store = redisHoldStore(lost, { prefix: uniquePrefix('killed'), timeoutMs: 300 });
    const ledger = freshLedger();
    try {
      const first = await store.reserve(ledger, hold(1), 60_000);
      expect(first.status).toBe('stale');
      await doomed.kill();
      const errors = await Promise.all(
        [
          store.reserve(ledger, hold(1), 60_000),
          store.setBalance(ledger, 10, 'x:0:0'),
          store.settle(ledger, 'id', 5, 1),
          store.release(ledger, 'id'),
          store.extend(ledger, 'id', 1_000),
          store.invalidate(ledger.account),
        ].map((call) =>
          call.then(
            () => 'resolved',
            (e: unknown) => e,
          ),
        ),
      );
      for (const error of errors) expect(error).toBeInstanceOf(StoreError);
      expect(errors.map(codeOf)).toEqual([
        'unavailable',
        'unavailable',
        'unavailable',
        'unavailable',
        'unavailable',
        'unavailable',
      ]);
      expect(String(errors[0])).toMatch(/^StoreError: redisHoldStore\.reserve: Redis failed: /);
    } finally {
      lost.destroy();
      await doomed.stop();
    }
  });

  it('a client that never answers: StoreError unavailable after timeoutMs', async () => {
    const store = redisHoldStore({ sendCommand: () => new Promise(() => {}) }, { timeoutMs: 30 });
    const error = await store.reserve(freshLedger(), hold(1), 60_000).catch((e: unknown) => e);
    expect(codeOf(error)).toBe('unavailable');
    expect(String(error)).toContain(
      'redisHoldStore.reserve: Redis failed: Redis did not answer within 30 ms',
    );
  });

  it('a key of another type under the prefix, or a hold not written here: StoreError unexpected_reply', async () => {
    const prefix = uniquePrefix('wrong-type');
    const c = clients.get('node-redis')!;
    const ledger = freshLedger();
    const base = tagged(prefix, ledger.account);
    await c.command(['SET', `${base}:a`, 'not a hash']);
    const store = redisHoldStore(c.client as RedisClient, { prefix });
    const error = await store.reserve(ledger, hold(1), 60_000).catch((e: unknown) => e);
    expect(codeOf(error)).toBe('unexpected_reply');
    expect(String(error)).toMatch(/^StoreError: redisHoldStore\.reserve: .*WRONGTYPE/);
    expect(codeOf(await store.invalidate(ledger.account).catch((e: unknown) => e))).toBe('unexpected_reply');

    const other = freshLedger();
    await c.command(['HSET', `${tagged(prefix, other.account)}:h:${ledgerKey(other)}`, 'h1', 'ten']);
    const odd = await store.reserve(other, hold(1), 60_000).catch((e: unknown) => e);
    expect(codeOf(odd)).toBe('unexpected_reply');
    expect(String(odd)).toContain('billing-sdk: hold h1 is not a hold');
  });

  it('a reply of another shape (an odd adapter): StoreError unexpected_reply, not a TypeError', async () => {
    const store = redisHoldStore({ sendCommand: async () => 'OK' });
    const ledger = freshLedger();
    for (const call of [
      store.reserve(ledger, hold(1), 60_000),
      store.settle(ledger, 'id', 5, 1),
      store.release(ledger, 'id'),
      store.extend(ledger, 'id', 1_000),
    ]) {
      const error = await call.catch((e: unknown) => e);
      expect(codeOf(error)).toBe('unexpected_reply');
    }
  });
});
