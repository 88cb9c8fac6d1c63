import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessStore, AccessStoreRead } from '../../src/access/store.js';
import { BillingError, InvalidRequestError, isBillingError, StoreError } from '../../src/index.js';
import { type RedisLike, redisAccessStore } from '../../src/redis/index.js';
import { type RestartableRedis, startRestartableRedis } from './access-redis.js';
import { connectRedis, type NodeRedis, uniquePrefix, useRedisClient } from './connect.js';
import { startRedisServer, useRedisServer } from './redis-server.js';

// redisAccessStore against a real redis-server: the AccessStore contract one step at a time, the
// watch (another instance's invalidations, outages, restarts, a trimmed stream), failures within
// timeoutMs, and random interleavings of several instances checked against a model.

const redis = useRedisServer();
const connected = useRedisClient(redis);
/** More connections to the same server: other instances, as other processes would have. */
const others: NodeRedis[] = [];
beforeAll(async () => {
  for (let i = 0; i < 4; i++) others.push(await connectRedis(redis.server.url));
});
afterAll(async () => {
  await Promise.all(others.map((c) => c.close()));
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds (asked every 10 ms), or fails after `ms` saying what was awaited. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}

/** A client that counts the commands sent and answered through it. */
function counting(client: RedisLike) {
  const counts = { sent: 0, answered: 0 };
  const wrapped: RedisLike = {
    async sendCommand(args) {
      counts.sent++;
      const reply = await client.sendCommand(args);
      counts.answered++;
      return reply;
    },
  };
  return { client: wrapped, counts };
}

/** A client whose commands wait while the gate is closed: an instance cut off from Redis, on demand. */
function gated(client: RedisLike) {
  let open: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const counts = { answered: 0 };
  return {
    counts,
    client: {
      async sendCommand(args: string[]) {
        await gate;
        const reply = await client.sendCommand(args);
        counts.answered++;
        return reply;
      },
    } satisfies RedisLike,
    close() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    open: () => open(),
  };
}

/** Starts a watch recording what it is told; `learned` resolves once its first poll answered. */
function watching(store: AccessStore) {
  const events: (string | undefined)[] = [];
  const errors: unknown[] = [];
  const stop = store.watch(
    (account) => void events.push(account),
    (error) => void errors.push(error),
  );
  return { events, errors, stop };
}

const LEASE = 10_000;
const ACCOUNT = 'acct:1';
/** A key of an account in the store of `prefix`: the account is the keys' hash tag (src/redis/keys.ts). */
const accountKey = (prefix: string, account: string, rest: string) => `${prefix}{${account}}:${rest}`;
/** A key of the store's own (the invalidation stream, its counter): the prefix is their hash tag. */
const ownKey = (prefix: string, name: string) => `${prefix}{${prefix}}:${name}`;

describe('redisAccessStore: options and arguments', () => {
  it('refuses bad options in one InvalidRequestError naming each, before anything is sent', () => {
    const { client, counts } = counting(connected.client);
    let error: unknown;
    try {
      redisAccessStore(client, {
        prefix: '',
        timeoutMs: Number.POSITIVE_INFINITY,
        pollIntervalMs: -1,
        streamMaxLen: 1.5,
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field).sort()).toEqual([
      'options.pollIntervalMs',
      'options.prefix',
      'options.streamMaxLen',
      'options.timeoutMs',
    ]);
    expect(() => redisAccessStore(client, { ttlMs: 5 } as never)).toThrow(/options\.ttlMs is not a known/);
    expect(() => redisAccessStore(client, 'fast' as never)).toThrow(InvalidRequestError);
    expect(() => redisAccessStore(client, { timeoutMs: Number.NaN })).toThrow(/options\.timeoutMs/);
    expect(counts.sent).toBe(0);
  });

  it('a bad argument rejects with InvalidRequestError and sends nothing', async () => {
    const { client, counts } = counting(connected.client);
    const store = redisAccessStore(client, { prefix: uniquePrefix('args') });
    // A lone surrogate would reach Redis as U+FFFD, sharing a key with every other such string.
    await expect(store.read('\uD800', ACCOUNT, LEASE)).rejects.toThrow(/key must be a string/);
    await expect(store.read('k', '\uDC00x', LEASE)).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(store.read('k', ACCOUNT, Number.NaN)).rejects.toThrow(/leaseMs/);
    await expect(store.write('k', ACCOUNT, 'g', true, 1_000, 0)).rejects.toThrow(/lifeMs/);
    await expect(store.write('k', ACCOUNT, 'g', { n: 1n }, 1_000, 2_000)).rejects.toThrow(
      /value must be JSON-serialisable/,
    );
    await expect(store.invalidate(42 as unknown as string)).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(store.release(undefined as unknown as string)).rejects.toBeInstanceOf(InvalidRequestError);
    expect(counts.sent).toBe(0);
  });
});

describe('redisAccessStore: the contract step by step', () => {
  const newStores = (n: number, options: { prefix?: string } = {}) => {
    const prefix = options.prefix ?? uniquePrefix('contract');
    return {
      prefix,
      stores: Array.from({ length: n }, (_, i) =>
        redisAccessStore(i === 0 ? connected.client : others[(i - 1) % others.length]!, { prefix }),
      ),
    };
  };

  it('an empty store: no answer and the lease; the next reader finds the lease taken', async () => {
    const { stores } = newStores(2);
    const [a, b] = stores as [AccessStore, AccessStore];
    const first = await a.read('k', ACCOUNT, LEASE);
    expect(first).toEqual({ generation: expect.any(String), leased: true });
    expect(await b.read('k', ACCOUNT, LEASE)).toEqual({ generation: first.generation, leased: false });
  });

  it('50 concurrent cold reads over 5 connections: exactly one takes the lease', async () => {
    const { stores } = newStores(5);
    const reads = await Promise.all(
      Array.from({ length: 50 }, (_, i) => stores[i % stores.length]!.read('cold', ACCOUNT, LEASE)),
    );
    expect(reads.filter((r) => r.leased)).toHaveLength(1);
    expect(new Set(reads.map((r) => r.generation)).size).toBe(1);
    expect(reads.every((r) => r.answer === undefined)).toBe(true);
  });

  it('write: every instance reads the answer, fresh; the lease is given up; keys as documented', async () => {
    const { prefix, stores } = newStores(2);
    const [a, b] = stores as [AccessStore, AccessStore];
    const { generation } = await a.read('k', ACCOUNT, LEASE);
    const value = { active: true, tier: 'pro', note: 'ü🙂' };
    expect(await a.write('k', ACCOUNT, generation, value, 30_000, 60_000)).toBe(true);
    const seen = await b.read('k', ACCOUNT, LEASE);
    expect(seen).toMatchObject({ answer: { value, ttlMs: 30_000 }, generation, leased: false });
    expect(seen.answer!.ageMs).toBeGreaterThanOrEqual(0);
    expect(seen.answer!.ageMs).toBeLessThan(5_000);

    const c = connected.client;
    expect(JSON.parse((await c.get(accountKey(prefix, ACCOUNT, 'a:k')))!)).toEqual({
      v: value,
      ttl: 30_000,
      life: 60_000,
    });
    const pttl = await c.pTTL(accountKey(prefix, ACCOUNT, 'a:k'));
    expect(pttl).toBeGreaterThan(55_000);
    expect(pttl).toBeLessThanOrEqual(60_000);
    expect(await c.exists(accountKey(prefix, ACCOUNT, 'l:k'))).toBe(0);
    expect(await c.sMembers(accountKey(prefix, ACCOUNT, 'k'))).toEqual([accountKey(prefix, ACCOUNT, 'a:k')]);
    expect(await c.pTTL(accountKey(prefix, ACCOUNT, 'k'))).toBeGreaterThan(55_000);
  });

  it('a write is refused after an invalidate between its read and it: nothing stored, the lease freed', async () => {
    const { stores } = newStores(3);
    const [a, b, c] = stores as [AccessStore, AccessStore, AccessStore];
    const before = await a.read('k', ACCOUNT, LEASE);
    expect(before.leased).toBe(true);
    await b.invalidate(ACCOUNT);
    expect(await a.write('k', ACCOUNT, before.generation, true, 30_000, 60_000)).toBe(false);
    const after = await c.read('k', ACCOUNT, LEASE);
    expect(after.answer).toBeUndefined();
    expect(after.leased).toBe(true);
    expect(after.generation).not.toBe(before.generation);
    // A read after the invalidate may store.
    expect(await c.write('k', ACCOUNT, after.generation, false, 30_000, 60_000)).toBe(true);
    expect((await a.read('k', ACCOUNT, LEASE)).answer?.value).toBe(false);
  });

  it('a write without the lease stores but leaves the holder its lease', async () => {
    const { prefix, stores } = newStores(3);
    const [a, b, c] = stores as [AccessStore, AccessStore, AccessStore];
    expect((await a.read('k', ACCOUNT, LEASE)).leased).toBe(true);
    const other = await b.read('k', ACCOUNT, LEASE);
    expect(other.leased).toBe(false);
    expect(await b.write('k', ACCOUNT, other.generation, 'b', 30_000, 60_000)).toBe(true);
    expect(await connected.client.exists(accountKey(prefix, ACCOUNT, 'l:k'))).toBe(1);
    await a.release('k');
    expect(await connected.client.exists(accountKey(prefix, ACCOUNT, 'l:k'))).toBe(0);
    expect((await c.read('k', ACCOUNT, LEASE)).answer?.value).toBe('b');
  });

  it('release after the lease expired and another took it leaves the other’s lease', async () => {
    const { prefix, stores } = newStores(3);
    const [a, b, c] = stores as [AccessStore, AccessStore, AccessStore];
    expect((await a.read('k', ACCOUNT, 100)).leased).toBe(true);
    await until(
      'the lease expired',
      async () => (await connected.client.exists(accountKey(prefix, ACCOUNT, 'l:k'))) === 0,
    );
    expect((await b.read('k', ACCOUNT, LEASE)).leased).toBe(true);
    await a.release('k');
    expect((await c.read('k', ACCOUNT, LEASE)).leased).toBe(false);
    await b.release('k');
    expect((await c.read('k', ACCOUNT, LEASE)).leased).toBe(true);
  });

  it('ageMs is Redis’s count (life minus PTTL), not the instance’s clock', async () => {
    const { prefix, stores } = newStores(1);
    const [a] = stores as [AccessStore];
    const { generation } = await a.read('k', ACCOUNT, LEASE);
    await a.write('k', ACCOUNT, generation, true, 1_000, 600_000);
    // Only Redis's count of the key's remaining life moves: 5 s older at once, to every instance.
    await connected.client.pExpire(accountKey(prefix, ACCOUNT, 'a:k'), 595_000);
    const aged = await a.read('k', ACCOUNT, LEASE);
    expect(aged.answer!.ageMs).toBeGreaterThanOrEqual(5_000);
    expect(aged.answer!.ageMs).toBeLessThan(5_500);
    // Past its ttl the answer still comes (stale, for the cache to serve), with the lease to refresh it.
    expect(aged.answer!.value).toBe(true);
    expect(aged.leased).toBe(true);
    expect((await a.read('k', ACCOUNT, LEASE)).leased).toBe(false);
  });

  it('ageMs grows as Redis’s clock runs; fresh answers take no lease', async () => {
    const { stores } = newStores(1);
    const [a] = stores as [AccessStore];
    const { generation } = await a.read('k', ACCOUNT, LEASE);
    await a.write('k', ACCOUNT, generation, true, 60_000, 600_000);
    const first = await a.read('k', ACCOUNT, LEASE);
    await sleep(200);
    const second = await a.read('k', ACCOUNT, LEASE);
    // PTTL counts whole ms: allow a few of rounding.
    expect(second.answer!.ageMs - first.answer!.ageMs).toBeGreaterThanOrEqual(195);
    expect(first.leased || second.leased).toBe(false);
  });

  it('an answer is gone once lifeMs passed: the next read finds none and takes the lease', async () => {
    const { prefix, stores } = newStores(1);
    const [a] = stores as [AccessStore];
    const { generation } = await a.read('k', ACCOUNT, LEASE);
    await a.write('k', ACCOUNT, generation, true, 50, 150);
    const pttl = await connected.client.pTTL(accountKey(prefix, ACCOUNT, 'a:k'));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(150);
    expect((await a.read('k', ACCOUNT, LEASE)).answer?.value).toBe(true);
    await until(
      'the answer expired',
      async () => (await connected.client.exists(accountKey(prefix, ACCOUNT, 'a:k'))) === 0,
    );
    expect(await a.read('k', ACCOUNT, LEASE)).toEqual({ generation, leased: true });
  });

  it('invalidate drops every answer of the account and none of another', async () => {
    const { prefix, stores } = newStores(2);
    const [a, b] = stores as [AccessStore, AccessStore];
    const keysOf = { [ACCOUNT]: ['one', 'two', 'three'], 'acct:2': ['four', 'five'] };
    for (const [account, keys] of Object.entries(keysOf)) {
      for (const key of keys) {
        const { generation } = await a.read(key, account, LEASE);
        expect(await a.write(key, account, generation, key, 30_000, 60_000)).toBe(true);
      }
    }
    const otherGeneration = (await b.read('four', 'acct:2', LEASE)).generation;
    await b.invalidate(ACCOUNT);
    for (const key of keysOf[ACCOUNT]) expect((await a.read(key, ACCOUNT, LEASE)).answer).toBeUndefined();
    for (const key of keysOf['acct:2']) {
      const read = await a.read(key, 'acct:2', LEASE);
      expect(read.answer?.value).toBe(key);
      expect(read.generation).toBe(otherGeneration);
    }
    expect(await connected.client.exists(accountKey(prefix, ACCOUNT, 'k'))).toBe(0);
  });

  it('keys and accounts of any characters stay apart', async () => {
    const { stores } = newStores(2);
    const [a, b] = stores as [AccessStore, AccessStore];
    // Strings that a naive key scheme would confuse: separators, the store's own tags, one
    // character in two normal forms, astral characters, whitespace, the empty string.
    const odd = [
      '',
      ':',
      'a:b',
      'a',
      'b',
      'a b',
      ' a',
      'ü',
      'u\u0308',
      '🙂',
      'k:x',
      'g:x',
      'inv',
      'meta',
      'l:',
      '\n',
      '{tag}',
      '*',
      '\\',
    ];
    for (const s of odd) {
      const { generation, leased } = await a.read(s, s, LEASE);
      expect(leased).toBe(true);
      expect(await a.write(s, s, generation, { s }, 30_000, 60_000)).toBe(true);
    }
    for (const s of odd) expect((await b.read(s, s, LEASE)).answer?.value).toEqual({ s });
    for (const [i, s] of odd.entries()) {
      await b.invalidate(s);
      for (const [j, t] of odd.entries()) {
        expect((await a.read(t, t, LEASE)).answer?.value).toEqual(j <= i ? undefined : { s: t });
      }
    }
  });
});

describe('redisAccessStore: watch', () => {
  it('tells another instance’s invalidations, in order, odd characters intact, none from before it started', async () => {
    const prefix = uniquePrefix('watch');
    const writer = redisAccessStore(others[0]!, { prefix });
    await writer.invalidate('before');
    const { client, counts } = counting(connected.client);
    const watch = watching(redisAccessStore(client, { prefix, pollIntervalMs: 10 }));
    try {
      await until('the first poll answered', () => counts.answered >= 1);
      for (const account of ['x', 'a:b c', '🙂', '']) await writer.invalidate(account);
      await until('four invalidations told', () => watch.events.length >= 4);
      // Nothing more: three more polls answered meanwhile.
      const polls = counts.answered;
      await until('three more polls', () => counts.answered >= polls + 3);
      expect(watch.events).toEqual(['x', 'a:b c', '🙂', '']);
      expect(watch.errors).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('after stop(), nothing more is told or sent', async () => {
    const prefix = uniquePrefix('watch-stop');
    const { client, counts } = counting(connected.client);
    const watch = watching(redisAccessStore(client, { prefix, pollIntervalMs: 5 }));
    await until('the first poll answered', () => counts.answered >= 1);
    watch.stop();
    const sent = counts.sent;
    // A live watch of the same pace, on another connection, hears of an invalidation after the stop.
    const witness = counting(others[1]!);
    const live = watching(redisAccessStore(witness.client, { prefix, pollIntervalMs: 5 }));
    await until('the live watch’s first poll answered', () => witness.counts.answered >= 1);
    await redisAccessStore(others[0]!, { prefix }).invalidate('late');
    await until('the live watch told', () => live.events.includes('late'));
    live.stop();
    expect(counts.sent - sent).toBeLessThanOrEqual(0);
    expect(watch.events).toEqual([]);
  });

  it('a listener that throws goes to onError and the watch goes on', async () => {
    const prefix = uniquePrefix('watch-throw');
    const { client, counts } = counting(connected.client);
    const told: (string | undefined)[] = [];
    const errors: unknown[] = [];
    const stop = redisAccessStore(client, { prefix, pollIntervalMs: 10 }).watch(
      (account) => {
        told.push(account);
        if (account === 'boom') throw new Error('listener failed');
      },
      (error) => void errors.push(error),
    );
    try {
      await until('the first poll answered', () => counts.answered >= 1);
      const writer = redisAccessStore(others[0]!, { prefix });
      await writer.invalidate('boom');
      await writer.invalidate('after');
      await until('both told', () => told.length >= 2);
      expect(told).toEqual(['boom', 'after']);
      expect(String(errors[0])).toContain('listener failed');
    } finally {
      stop();
    }
  });

  it('started while Redis fails: onError told, and once it answers, undefined (what came meanwhile is unknown)', async () => {
    const prefix = uniquePrefix('watch-late');
    let failing = true;
    const flaky: RedisLike = {
      sendCommand: (args) =>
        failing ? Promise.reject(new Error('ECONNREFUSED')) : connected.client.sendCommand(args),
    };
    const watch = watching(redisAccessStore(flaky, { prefix, pollIntervalMs: 10 }));
    try {
      await until('onError told', () => watch.errors.length >= 1);
      expect(watch.errors[0]).toBeInstanceOf(BillingError);
      expect((watch.errors[0] as BillingError).cause).toEqual(new Error('ECONNREFUSED'));
      // Sent after watch() was called and before its first poll answered: it must not pass unseen.
      await redisAccessStore(others[0]!, { prefix }).invalidate('meanwhile');
      failing = false;
      await until('undefined told', () => watch.events.length >= 1);
      expect(watch.events).toEqual([undefined]);
    } finally {
      watch.stop();
    }
  });

  it('far behind but nothing trimmed: every invalidation, in order, across several batches', async () => {
    const prefix = uniquePrefix('watch-batches');
    const cut = gated(connected.client);
    const watch = watching(redisAccessStore(cut.client, { prefix, pollIntervalMs: 10, timeoutMs: 10_000 }));
    try {
      await until('the first poll answered', () => cut.counts.answered >= 1);
      cut.close();
      const writer = redisAccessStore(others[0]!, { prefix });
      const sent = Array.from({ length: 2_500 }, (_, i) => `acct-${i}`);
      for (const account of sent) await writer.invalidate(account);
      cut.open();
      await until('2 500 told', () => watch.events.length >= sent.length);
      expect(watch.events).toEqual(sent);
      expect(watch.errors).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('trimmed past its cursor: told undefined (drop everything), then goes on with later ones', async () => {
    const prefix = uniquePrefix('watch-trim');
    const cut = gated(connected.client);
    const watch = watching(redisAccessStore(cut.client, { prefix, pollIntervalMs: 10, timeoutMs: 10_000 }));
    try {
      await until('the first poll answered', () => cut.counts.answered >= 1);
      cut.close();
      // MAXLEN ~ trims whole stream nodes (100 entries by default): 400 beyond 10 is well past one.
      const writer = redisAccessStore(others[0]!, { prefix, streamMaxLen: 10 });
      for (let i = 0; i < 400; i++) await writer.invalidate(`acct-${i}`);
      expect(await connected.client.xLen(ownKey(prefix, 'inv'))).toBeLessThan(400);
      cut.open();
      await until('undefined told', () => watch.events.includes(undefined));
      await writer.invalidate('later');
      await until('the later one told', () => watch.events.includes('later'));
      expect(watch.events).toEqual([undefined, 'later']);
    } finally {
      watch.stop();
    }
  });

  it('the stream deleted under it: told undefined', async () => {
    const prefix = uniquePrefix('watch-deleted');
    const cut = gated(connected.client);
    const watch = watching(redisAccessStore(cut.client, { prefix, pollIntervalMs: 10, timeoutMs: 10_000 }));
    try {
      await until('the first poll answered', () => cut.counts.answered >= 1);
      cut.close();
      await redisAccessStore(others[0]!, { prefix }).invalidate('lost');
      await connected.client.del(ownKey(prefix, 'inv'));
      cut.open();
      await until('undefined told', () => watch.events.length >= 1);
      expect(watch.events).toEqual([undefined]);
    } finally {
      watch.stop();
    }
  });
});

describe('redisAccessStore: Redis restarts and outages', () => {
  let server: RestartableRedis | undefined;
  const clients: NodeRedis[] = [];
  afterAll(async () => {
    for (const c of clients) c.destroy();
    await server?.dispose();
  });
  const connect = async (url: string) => {
    const client = await connectRedis(url);
    clients.push(client);
    return client;
  };

  it('a restart that keeps the data: the watch reports the outage, then resumes at its cursor (nothing lost, nothing repeated)', async () => {
    server = await startRestartableRedis(true);
    const prefix = uniquePrefix('restart-kept');
    const { client, counts } = counting(await connect(server.url));
    const watch = watching(redisAccessStore(client, { prefix, pollIntervalMs: 25, timeoutMs: 200 }));
    const writerClient = await connect(server.url);
    // A long timeout, and sent once the client is back: a timed-out invalidate would still be
    // queued in node-redis and sent again on reconnect, telling 'during' twice.
    const writer = redisAccessStore(writerClient, { prefix, timeoutMs: 10_000 });
    try {
      await until('the first poll answered', () => counts.answered >= 1);
      await writer.invalidate('before');
      await until('before told', () => watch.events.includes('before'));
      await server.stop();
      const down = Date.now();
      await until('onError told', () => watch.errors.length >= 1);
      // Down for a second and a half: at 25 ms polls and 200 ms timeouts that would be several
      // errors; backing off to a poll a second while failing keeps it to about two.
      await sleep(1_500 - (Date.now() - down));
      expect(watch.errors.length).toBeLessThanOrEqual(3);
      await server.start();
      await until('the writer reconnected', () => writerClient.isReady, 10_000);
      // Most likely while the watch still backs off: it finds this one at its cursor.
      await writer.invalidate('during');
      await writer.invalidate('after');
      await until('after told', () => watch.events.includes('after'), 10_000);
      expect(watch.events).toEqual(['before', 'during', 'after']);
    } finally {
      watch.stop();
    }
  });

  it('a restart that lost the data: the watch tells undefined, a write read before it is refused', async () => {
    await server?.dispose();
    server = await startRestartableRedis(false);
    const prefix = uniquePrefix('restart-lost');
    const { client, counts } = counting(await connect(server.url));
    const watch = watching(redisAccessStore(client, { prefix, pollIntervalMs: 25, timeoutMs: 200 }));
    const storeClient = await connect(server.url);
    const store = redisAccessStore(storeClient, { prefix, timeoutMs: 10_000 });
    try {
      await until('the first poll answered', () => counts.answered >= 1);
      const before = await store.read('k', ACCOUNT, LEASE);
      // Invalidated, then lost with the data: counters start again from 0, the epoch does not.
      await store.invalidate(ACCOUNT);
      await until('the invalidation told', () => watch.events.includes(ACCOUNT));
      await server.stop();
      await server.start();
      await until('the client reconnected', () => storeClient.isReady, 10_000);
      // Another read first, so the data set has its new epoch: the counter alone would match again.
      expect((await store.read('other', ACCOUNT, LEASE)).generation).not.toBe(before.generation);
      expect(await store.write('k', ACCOUNT, before.generation, true, 30_000, 60_000)).toBe(false);
      const after = await store.read('k', ACCOUNT, LEASE);
      expect(after.generation).not.toBe(before.generation);
      await until('undefined told', () => watch.events.includes(undefined), 10_000);
      await store.invalidate('later');
      await until('later told', () => watch.events.includes('later'));
      expect(watch.events).toEqual([ACCOUNT, undefined, 'later']);
    } finally {
      watch.stop();
    }
  });

  for (const how of ['stopped', 'frozen (SIGSTOP)'] as const) {
    it(`every method rejects within timeoutMs when Redis is ${how}`, async () => {
      await server?.dispose();
      server = await startRestartableRedis(false);
      const timeoutMs = 300;
      const store = redisAccessStore(await connect(server.url), { prefix: uniquePrefix('down'), timeoutMs });
      // A lease held, so release has something to send.
      const { generation } = await store.read('k', ACCOUNT, LEASE);
      const pid = server.pid;
      if (how === 'stopped') await server.stop();
      else process.kill(pid, 'SIGSTOP');
      try {
        const calls: [string, () => Promise<unknown>][] = [
          ['read', () => store.read('k', ACCOUNT, LEASE)],
          ['write', () => store.write('other', ACCOUNT, generation, true, 1_000, 2_000)],
          ['invalidate', () => store.invalidate(ACCOUNT)],
          ['release', () => store.release('k')],
        ];
        for (const [name, call] of calls) {
          const started = performance.now();
          const outcome = await call().then(
            () => 'resolved',
            (error: unknown) => error,
          );
          const elapsed = performance.now() - started;
          // One error family whatever the client threw; the client's error as the cause.
          expect(outcome, name).toBeInstanceOf(BillingError);
          expect(String(outcome), name).toContain(`redisAccessStore.${name}: Redis failed`);
          expect((outcome as BillingError).cause, name).toBeInstanceOf(Error);
          // Generous: the bound proves it does not hang; the timer alone decides the figure.
          expect(elapsed, name).toBeLessThan(timeoutMs + 1_000);
        }
        const watch = watching(store);
        await until('onError told', () => watch.errors.length >= 1, timeoutMs + 2_000);
        watch.stop();
        expect(watch.errors[0]).toBeInstanceOf(BillingError);
        expect(watch.events).toEqual([]);
      } finally {
        if (how !== 'stopped') process.kill(pid, 'SIGCONT');
      }
    });
  }

  it('a reply that came while the process was too busy to read it (past timeoutMs) is taken, not timed out', async () => {
    const store = redisAccessStore(connected.client, { prefix: uniquePrefix('access-busy'), timeoutMs: 50 });
    // Redis holds every command for 100 ms (CLIENT PAUSE), so the read's
    // reply comes while this process runs 300 ms of synchronous work (a module loading, a JSON
    // parse, as a process starting up does on its first lookup), long past timeoutMs.
    await others[0]!.sendCommand(['CLIENT', 'PAUSE', '100', 'ALL']);
    const started = performance.now();
    const read = store.read('k', ACCOUNT, LEASE);
    // The loop turns long enough for the client to write the command, not for the timeout.
    await new Promise((resolve) => setTimeout(resolve, 20));
    while (performance.now() - started < 300) {
      // busy: the reply arrives and waits unread
    }
    expect(await read).toMatchObject({ leased: true });
  });

  it('a read that timed out but ran later gives up the lease it took: the others need not wait out leaseMs', async () => {
    const prefix = uniquePrefix('access-late-read');
    const cut = gated(connected.client);
    const late = redisAccessStore(cut.client, { prefix, timeoutMs: 50 });
    cut.close();
    await expect(late.read('k', ACCOUNT, 60_000)).rejects.toMatchObject({ code: 'unavailable' });
    cut.open();
    // The read reached Redis after its caller gave up on it, and took the lease (no one held it).
    await until('the late read ran', () => cut.counts.answered >= 1);
    const lease = accountKey(prefix, ACCOUNT, 'l:k');
    await until('its lease given up', async () => (await connected.client.exists(lease)) === 0);
    expect(await redisAccessStore(others[0]!, { prefix }).read('k', ACCOUNT, LEASE)).toMatchObject({
      leased: true,
    });
  });

  it('a reply of an unexpected shape rejects with a BillingError naming the step', async () => {
    const store = redisAccessStore({ sendCommand: async () => 'OK' });
    await expect(store.read('k', ACCOUNT, LEASE)).rejects.toThrow(
      /redisAccessStore\.read: unexpected Redis reply "OK"/,
    );
    const errors: unknown[] = [];
    const stop = store.watch(
      () => {},
      (error) => void errors.push(error),
    );
    await until('onError told', () => errors.length >= 1);
    stop();
    expect(errors[0]).toBeInstanceOf(BillingError);
    expect(String(errors[0])).toContain('redisAccessStore.watch');
  });
});

describe('redisAccessStore failures are typed: a StoreError with its code, in rejections and in the watch’s onError', () => {
  const codeOf = (error: unknown) => (isBillingError(error, 'StoreError') ? error.code : error);

  it('a Redis killed (SIGKILL): the watch’s onError and every method get StoreError unavailable', async () => {
    const doomed = await startRedisServer();
    const lost = await connectRedis(doomed.url);
    const { client, counts } = counting(lost);
    const store = redisAccessStore(client, { prefix: uniquePrefix('killed'), timeoutMs: 300 });
    const watch = watching(store);
    try {
      await until('the first poll answered', () => counts.answered >= 1);
      const { generation } = await store.read('k', ACCOUNT, LEASE);
      await doomed.kill();
      await until('onError told', () => watch.errors.length >= 1);
      expect(watch.errors[0]).toBeInstanceOf(StoreError);
      expect(codeOf(watch.errors[0])).toBe('unavailable');
      expect(String(watch.errors[0])).toMatch(/^StoreError: redisAccessStore\.watch: Redis failed: /);
      const outcomes = await Promise.all(
        [
          store.read('k', ACCOUNT, LEASE),
          store.write('other', ACCOUNT, generation, true, 1_000, 2_000),
          store.invalidate(ACCOUNT),
          store.release('k'),
        ].map((call) => call.then(() => 'resolved', codeOf)),
      );
      expect(outcomes).toEqual(['unavailable', 'unavailable', 'unavailable', 'unavailable']);
    } finally {
      watch.stop();
      lost.destroy();
      await doomed.stop();
    }
  });

  it('a key of another type under the prefix (put there by hand): StoreError unexpected_reply, in the watch too', async () => {
    const prefix = uniquePrefix('wrong-type');
    await connected.client.set(accountKey(prefix, ACCOUNT, 'g'), 'not a hash');
    await connected.client.set(ownKey(prefix, 'meta'), 'not a hash');
    const store = redisAccessStore(connected.client, { prefix });
    const error = await store.read('k', ACCOUNT, LEASE).catch((e: unknown) => e);
    expect(codeOf(error)).toBe('unexpected_reply');
    expect(String(error)).toMatch(/^StoreError: redisAccessStore\.read: .*WRONGTYPE/);
    expect(codeOf(await store.invalidate(ACCOUNT).catch((e: unknown) => e))).toBe('unexpected_reply');
    const watch = watching(store);
    try {
      await until('onError told', () => watch.errors.length >= 1);
      expect(codeOf(watch.errors[0])).toBe('unexpected_reply');
    } finally {
      watch.stop();
    }
  });

  it('a reply of another shape (an odd adapter): StoreError unexpected_reply, in the watch too', async () => {
    const store = redisAccessStore({ sendCommand: async () => 'OK' });
    expect(codeOf(await store.read('k', ACCOUNT, LEASE).catch((e: unknown) => e))).toBe('unexpected_reply');
    const watch = watching(store);
    try {
      await until('onError told', () => watch.errors.length >= 1);
      expect(codeOf(watch.errors[0])).toBe('unexpected_reply');
    } finally {
      watch.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Random interleavings against a model.

/** Keys of the property runs, two per account; strings with separators on purpose. */
const KEYS: readonly { key: string; account: string }[] = [
  { key: 'k0', account: 'acct:1' },
  { key: 'k 1', account: 'acct:1' },
  { key: 'k0:x', account: 'acct 2' },
  { key: '🙂', account: 'acct 2' },
];
const INSTANCES = 3;

type Op =
  | { kind: 'read' | 'write' | 'release'; inst: number; key: number; value: number }
  | { kind: 'invalidate'; inst: number; key: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('read', 'write', 'release') as fc.Arbitrary<'read' | 'write' | 'release'>,
    inst: fc.nat(INSTANCES - 1),
    key: fc.nat(KEYS.length - 1),
    value: fc.nat(1_000),
  }),
  fc.record({
    kind: fc.constant('invalidate' as const),
    inst: fc.nat(INSTANCES - 1),
    key: fc.nat(KEYS.length - 1),
  }),
);

describe('redisAccessStore: random interleavings of several instances', () => {
  it('one step at a time, every answer, lease, generation and write agrees with a model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 40, size: 'max' }), async (ops) => {
        const prefix = uniquePrefix('model');
        const stores = Array.from({ length: INSTANCES }, (_, i) =>
          redisAccessStore(i === 0 ? connected.client : others[i - 1]!, { prefix }),
        );
        // The model: a counter per account, the answer and the lease holder per key, and what
        // each instance last read of each key.
        const counter = new Map<string, number>();
        const answers = new Map<number, number>();
        const holders = new Map<number, number>();
        const lastRead = new Map<string, { generation: string; counter: number }>();
        const generationOf = new Map<string, Map<number, string>>();
        for (const op of ops) {
          const { key, account } = KEYS[op.key]!;
          const store = stores[op.inst]!;
          const now = counter.get(account) ?? 0;
          switch (op.kind) {
            case 'read': {
              const read: AccessStoreRead = await store.read(key, account, 60_000);
              expect(read.answer?.value).toBe(answers.get(op.key));
              const expectLease = !answers.has(op.key) && !holders.has(op.key);
              expect(read.leased).toBe(expectLease);
              if (expectLease) holders.set(op.key, op.inst);
              // One generation string per counter of the account, and never the same for two.
              const seen = generationOf.get(account) ?? new Map<number, string>();
              generationOf.set(account, seen);
              const known = seen.get(now);
              if (known === undefined) {
                expect([...seen.values()]).not.toContain(read.generation);
                seen.set(now, read.generation);
              } else expect(read.generation).toBe(known);
              lastRead.set(`${op.inst}/${op.key}`, { generation: read.generation, counter: now });
              break;
            }
            case 'write': {
              const read = lastRead.get(`${op.inst}/${op.key}`);
              const generation = read?.generation ?? 'never-read:0';
              // The rule under test: a write lands only when no invalidation came since its read.
              const lands = read !== undefined && read.counter === now;
              expect(await store.write(key, account, generation, op.value, 60_000, 120_000)).toBe(lands);
              if (lands) answers.set(op.key, op.value);
              if (holders.get(op.key) === op.inst) holders.delete(op.key);
              break;
            }
            case 'release':
              await store.release(key);
              if (holders.get(op.key) === op.inst) holders.delete(op.key);
              break;
            case 'invalidate':
              await store.invalidate(account);
              counter.set(account, now + 1);
              for (const [i, k] of KEYS.entries()) if (k.account === account) answers.delete(i);
              break;
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it('concurrently: a write never lands over an invalidate that came after its read, and always lands without one', async () => {
    // Each instance runs its own steps in order; the instances run at once, on their own connections.
    // Real-time order (a reply received before another command was sent) fixes the order in Redis.
    type Step = { kind: 'read' | 'write' | 'invalidate'; key: number };
    const stepArb: fc.Arbitrary<Step> = fc.record({
      kind: fc.constantFrom('read', 'read', 'write', 'write', 'invalidate') as fc.Arbitrary<Step['kind']>,
      key: fc.nat(KEYS.length - 1),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(stepArb, { maxLength: 15, size: 'max' }), { minLength: 2, maxLength: 4 }),
        async (programs) => {
          const prefix = uniquePrefix('concurrent');
          let tick = 0;
          type Span = { start: number; end: number };
          const invalidations: (Span & { account: string })[] = [];
          const writes: (Span & { account: string; read: Span; landed: boolean })[] = [];
          await Promise.all(
            programs.map(async (steps, inst) => {
              const store = redisAccessStore(others[inst % others.length]!, { prefix });
              const reads = new Map<number, Span & { generation: string }>();
              for (const step of steps) {
                const { key, account } = KEYS[step.key]!;
                const start = ++tick;
                if (step.kind === 'read') {
                  const { generation } = await store.read(key, account, 60_000);
                  reads.set(step.key, { start, end: ++tick, generation });
                } else if (step.kind === 'invalidate') {
                  await store.invalidate(account);
                  invalidations.push({ start, end: ++tick, account });
                } else {
                  const read = reads.get(step.key);
                  if (!read) continue;
                  const landed = await store.write(key, account, read.generation, inst, 60_000, 120_000);
                  writes.push({ start, end: ++tick, account, read, landed });
                }
              }
            }),
          );
          for (const w of writes) {
            const ofAccount = invalidations.filter((i) => i.account === w.account);
            // Surely between: it began after the read's reply and ended before the write was sent.
            const between = ofAccount.some((i) => i.start > w.read.end && i.end < w.start);
            // Surely not between: it ended before the read was sent, or began after the write's reply.
            const outside = ofAccount.every((i) => i.end < w.read.start || i.start > w.end);
            if (between) expect(w.landed).toBe(false);
            if (outside) expect(w.landed).toBe(true);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
