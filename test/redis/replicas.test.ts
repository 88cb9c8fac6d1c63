import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError, SpoolError, StoreError } from '../../src/core/errors/index.js';
import { BillingClient, createUsageTracker, createWebhookHandler } from '../../src/index.js';
import { type RedisLike, redisDedupeStore, redisSpool } from '../../src/redis/index.js';
import type { Spool, SpoolEntry } from '../../src/tracker/spool.js';
import { caught, useMockServer } from '../helpers.js';
import { spooledEvent } from '../tracker/spool-contract.js';
import { event as webhookEvent } from '../webhooks/event.js';
import { connectRedis, type NodeRedis, uniquePrefix } from './connect.js';
import { useRedisServer } from './redis-server.js';
import { type ReplicaServer, startReplica } from './replica-server.js';

// `waitReplicas` on one redis-server with a replica of the test's own: an append (or a dedupe
// store's done mark) resolves once the replica holds it, and rejects typed when the replica is
// frozen (SIGSTOP: still connected, acknowledging nothing) or dead, so a tracker's `track` never
// resolves for an event a failover could lose.

const redis = useRedisServer();
const mock = useMockServer();
let client: NodeRedis;
let replica: ReplicaServer;
let onReplica: NodeRedis;

async function withReplica(): Promise<void> {
  replica = await startReplica(redis.server.port);
  onReplica = await connectRedis(`redis://127.0.0.1:${replica.port}`);
  // In sync on its side, a new replica may take a moment to acknowledge on the master's: wait
  // until WAIT counts it for a write made now.
  const deadline = Date.now() + 10_000;
  for (;;) {
    await client.set(uniquePrefix('probe'), '1', { PX: 10_000 });
    if (Number(await client.sendCommand(['WAIT', '1', '200'])) === 1) return;
    if (Date.now() > deadline) throw new Error('the replica never acknowledged a write');
  }
}

beforeAll(async () => {
  client = await connectRedis(redis.server.url);
  await withReplica();
}, 30_000);
const made: Spool[] = [];
afterAll(async () => {
  replica?.resume();
  for (const spool of made) await spool.close().catch(() => {});
  await onReplica?.close().catch(() => {});
  await replica?.kill();
  await client?.close();
});

/** A spool on `on` (the test's client by default), opened, closed after the file. */
async function opened(options: Parameters<typeof redisSpool>[1], on: RedisLike = client): Promise<Spool> {
  const spool = redisSpool(on, options);
  made.push(spool);
  await spool.open();
  return spool;
}

/** Runs `step` with the replica frozen (SIGSTOP), thawed after whatever happens. */
async function frozen<T>(step: () => Promise<T>): Promise<T> {
  replica.pause();
  try {
    return await step();
  } finally {
    replica.resume();
  }
}

/** A client that records each command's name before passing it on. */
function recording(): RedisLike & { names: string[] } {
  const names: string[] = [];
  return {
    names,
    sendCommand: (args) => {
      names.push(args[0] ?? '');
      return client.sendCommand(args);
    },
  };
}

const WAIT_MS = 300;
/** How long a new entry waits before any instance with `waitReplicas` takes it: WAIT_MS + 500 ms. */
const WINDOW_MS = WAIT_MS + 500;

/** Takes until `count` entries came (new entries wait out the withdrawal window first). */
async function takeAll(spool: Spool, count: number): Promise<SpoolEntry[]> {
  const out: SpoolEntry[] = [];
  const deadline = Date.now() + WINDOW_MS + 2_000;
  while (out.length < count && Date.now() < deadline) {
    out.push(...(await spool.take(count - out.length)));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return out;
}

describe('waitReplicas options', () => {
  const bad: [Record<string, unknown>, string][] = [
    [{ waitReplicas: -1 }, 'options.waitReplicas'],
    [{ waitReplicas: 1.5 }, 'options.waitReplicas'],
    [{ waitReplicas: '1' }, 'options.waitReplicas'],
    [{ waitReplicas: 1_001 }, 'options.waitReplicas'],
    [{ waitTimeoutMs: 0 }, 'options.waitTimeoutMs'],
    [{ waitTimeoutMs: Number.POSITIVE_INFINITY }, 'options.waitTimeoutMs'],
    [{ waitTimeoutMs: 2.5 }, 'options.waitTimeoutMs'],
  ];
  it.each(bad)('redisSpool refuses %o, naming it', (options, field) => {
    let error: unknown;
    try {
      redisSpool(client, options as Parameters<typeof redisSpool>[1]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual([field]);
  });
  it.each(bad)('redisDedupeStore refuses %o, naming it', (options, field) => {
    let error: unknown;
    try {
      redisDedupeStore(client, options as Parameters<typeof redisDedupeStore>[1]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual([field]);
    expect((error as Error).message).toMatch(/^redisDedupeStore: /);
  });
});

describe('redisSpool with waitReplicas', () => {
  it('without it (the default), no WAIT is sent; with it, one WAIT follows each append', async () => {
    const plain = recording();
    const spool = await opened({ stream: uniquePrefix('no-wait') }, plain);
    await spool.append([spooledEvent(0)]);
    expect(plain.names).not.toContain('WAIT');
    const waiting = recording();
    const replicated = await opened({ stream: uniquePrefix('wait'), waitReplicas: 1 }, waiting);
    const before = waiting.names.length;
    await replicated.append([spooledEvent(1), spooledEvent(2)]);
    expect(waiting.names.slice(before)).toEqual(['EVAL', 'WAIT']);
  });

  it('an append resolves once the replica holds the entries', async () => {
    const stream = uniquePrefix('replicated');
    const spool = await opened({ stream, waitReplicas: 1, waitTimeoutMs: WAIT_MS });
    for (let n = 0; n < 20; n++) {
      const [id] = await spool.append([spooledEvent(n)]);
      // Read on the replica right away: WAIT said it has it.
      expect(await onReplica.xRange(stream, id as string, id as string)).toHaveLength(1);
    }
  });

  it('with the replica frozen, an append rejects typed within waitTimeoutMs and is withdrawn', async () => {
    const stream = uniquePrefix('frozen');
    const spool = await opened({ stream, waitReplicas: 1, waitTimeoutMs: WAIT_MS });
    const event = spooledEvent(0);
    const { error, took } = await frozen(async () => {
      const started = performance.now();
      const error = await caught(() => spool.append([event]));
      return { error, took: performance.now() - started };
    });
    expect(error).toBeInstanceOf(SpoolError);
    expect((error as SpoolError).code).toBe('not_replicated');
    expect(error.message).toMatch(/0 of 1 replica\(s\) confirmed it within 300 ms: withdrawn/);
    expect(took).toBeGreaterThanOrEqual(WAIT_MS - 10);
    expect(took).toBeLessThan(WAIT_MS + 1_000);
    expect(await client.xLen(stream)).toBe(0); // nothing left to send
    expect(await spool.take(10)).toEqual([]);
    // The replica thawed, appends resolve again, and it ends with the master's stream.
    const [id] = await spool.append([spooledEvent(1)]);
    expect((await takeAll(spool, 1)).map((e) => e.id)).toEqual([id]);
    expect((await onReplica.xRange(stream, '-', '+')).map((e) => e.id)).toEqual([id]);
  });

  it('an entry another instance took while WAIT waited is left to it, and the error says so', async () => {
    const stream = uniquePrefix('handed');
    const other = await connectRedis(redis.server.url);
    try {
      const spool = await opened({ stream, waitReplicas: 1, waitTimeoutMs: WAIT_MS });
      const taker = await opened({ stream }, other);
      const event = spooledEvent(0);
      const error = await frozen(async () => {
        const appending = caught(() => spool.append([event]));
        let taken: string[] = [];
        while (!taken.length) taken = (await taker.take(10)).map((e) => e.event.event_key);
        expect(taken).toEqual([event.event_key]);
        return appending;
      });
      expect((error as SpoolError).code).toBe('not_replicated');
      expect(error.message).toMatch(/1 of 1 already handed to an instance may still be recorded/);
      expect(await client.xLen(stream)).toBe(1); // still there for its holder to send and ack
    } finally {
      await other.close();
    }
  });

  it('a replace waits as an append does: rejects typed with the replica frozen, the aggregate kept', async () => {
    const stream = uniquePrefix('replace');
    const spool = await opened({ stream, waitReplicas: 1, waitTimeoutMs: WAIT_MS });
    await spool.append([spooledEvent(0), spooledEvent(1)]);
    const held = (await takeAll(spool, 2)).map((e) => e.id);
    expect(held).toHaveLength(2);
    const aggregate = spooledEvent(2);
    const error = await frozen(() => caught(() => spool.replace(held, aggregate)));
    expect((error as SpoolError).code).toBe('not_replicated');
    expect(error.message).toMatch(/the aggregate stays in the stream/);
    const left = await client.xRange(stream, '-', '+');
    expect(left.map((e) => JSON.parse(e.message.event as string).event_key)).toEqual([aggregate.event_key]);
    // With the replica back, a replace resolves and the replica has the aggregate at once.
    await spool.append([spooledEvent(3), spooledEvent(4)]);
    const next = (await takeAll(spool, 3)).filter((e) => e.event.event_key !== aggregate.event_key);
    expect(next).toHaveLength(2);
    const id = await spool.replace(
      next.map((e) => e.id),
      spooledEvent(5),
    );
    expect(await onReplica.xRange(stream, id, id)).toHaveLength(1);
  });

  it('a new entry is taken only once the withdrawal window passed (waitTimeoutMs + 500 ms)', async () => {
    const spool = await opened({ stream: uniquePrefix('window'), waitReplicas: 1, waitTimeoutMs: WAIT_MS });
    const [id] = await spool.append([spooledEvent(0)]);
    const appended = performance.now();
    expect(await spool.take(10)).toEqual([]);
    const entries = await takeAll(spool, 1);
    expect(entries.map((e) => e.id)).toEqual([id]);
    expect(performance.now() - appended).toBeGreaterThanOrEqual(WINDOW_MS - 50);
  });

  it('asking for more replicas than there are rejects every append, typed', async () => {
    const spool = await opened({ stream: uniquePrefix('two'), waitReplicas: 2, waitTimeoutMs: 100 });
    const error = await caught(() => spool.append([spooledEvent(0)]));
    expect((error as SpoolError).code).toBe('not_replicated');
    expect(error.message).toMatch(/1 of 2 replica\(s\)/);
  });
});

describe('a usage tracker on a redisSpool with waitReplicas: 1', () => {
  it('track resolves with the replica live, and rejects (nothing recorded) with it frozen', async () => {
    const billing = new BillingClient({
      apiKey: mock.server.apiKey,
      baseUrl: mock.server.baseUrl,
      logLevel: 'off',
    });
    const errors: unknown[] = [];
    const tracker = createUsageTracker(billing, {
      spool: redisSpool(client, { stream: uniquePrefix('tracker'), waitReplicas: 1, waitTimeoutMs: WAIT_MS }),
      onError: (error) => errors.push(error),
    });
    try {
      const event = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };
      const live = await tracker.track({ ...event, quantity: 1, event_key: `live-${Date.now()}` });
      const lost = `frozen-${Date.now()}`;
      const error = await frozen(() =>
        caught(() => tracker.track({ ...event, quantity: 2, event_key: lost })),
      );
      expect(error).toBeInstanceOf(SpoolError);
      expect((error as SpoolError).code).toBe('not_replicated');
      await tracker.flush();
      const keys = mock.server.store.usageEvents.map((e) => e.event_key);
      expect(keys.filter((k) => k === live.event_key)).toHaveLength(1);
      expect(keys).not.toContain(lost);
      expect(tracker.stats().queued).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await tracker.close();
    }
  });
});

describe('redisDedupeStore with waitReplicas', () => {
  it('without it (the default), complete sends no WAIT; with it, one WAIT follows the done mark', async () => {
    const plain = recording();
    const store = redisDedupeStore(plain, { prefix: uniquePrefix('no-wait') });
    await store.claim('evt', 'token', 10_000);
    expect(await store.complete('evt', 'token')).toBe(true);
    expect(plain.names).toEqual(['EVAL', 'EVAL']);
    const waiting = recording();
    const replicated = redisDedupeStore(waiting, { prefix: uniquePrefix('wait'), waitReplicas: 1 });
    await replicated.claim('evt', 'token', 10_000);
    expect(await replicated.complete('evt', 'token')).toBe(true);
    expect(waiting.names).toEqual(['EVAL', 'EVAL', 'WAIT']);
  });

  it('complete resolves once the replica holds the done mark', async () => {
    const prefix = uniquePrefix('dedupe');
    const store = redisDedupeStore(client, { prefix, waitReplicas: 1, waitTimeoutMs: WAIT_MS });
    expect(await store.claim('evt_1', 'token', 10_000)).toBe('claimed');
    expect(await store.complete('evt_1', 'token')).toBe(true);
    expect(await onReplica.get(`${prefix}evt_1`)).toMatch(/^done/);
    // A claim that had expired (another token) still answers false once confirmed.
    expect(await store.complete('evt_2', 'token')).toBe(false);
    expect(await onReplica.get(`${prefix}evt_2`)).toMatch(/^done/);
  });

  it('with the replica frozen, complete rejects typed; the mark stays on the master', async () => {
    const prefix = uniquePrefix('dedupe-frozen');
    const store = redisDedupeStore(client, { prefix, waitReplicas: 1, waitTimeoutMs: WAIT_MS });
    expect(await store.claim('evt_1', 'token', 10_000)).toBe('claimed');
    const error = await frozen(() => caught(() => store.complete('evt_1', 'token')));
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('not_replicated');
    expect(error.message).toMatch(/0 of 1 replica\(s\) confirmed it within 300 ms/);
    expect(await store.claim('evt_1', 'other', 10_000)).toBe('done');
  });
});

describe('a webhook handler on a redisDedupeStore with waitReplicas: 1', () => {
  it('a done mark not confirmed answers 500 (onError told); the retry finds it done, onEvent ran once', async () => {
    const store = redisDedupeStore(client, {
      prefix: uniquePrefix('handler'),
      waitReplicas: 1,
      waitTimeoutMs: WAIT_MS,
    });
    let calls = 0;
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      onEvent: () => void calls++,
      dedupe: store,
      onError: (error) => void errors.push(error),
    });
    const body = JSON.stringify(webhookEvent());
    const post = () => handler(new Request('http://x/', { method: 'POST', body }));
    const first = await frozen(post);
    expect(first.status).toBe(500);
    expect(errors.map((e) => (e as StoreError).code)).toEqual(['not_replicated']);
    expect((await post()).status).toBe(200);
    expect(calls).toBe(1);
  });
});

describe('with the replica dead', () => {
  it('appends and completes reject typed; a new replica makes them resolve again', async () => {
    const spool = await opened({ stream: uniquePrefix('dead'), waitReplicas: 1, waitTimeoutMs: WAIT_MS });
    const store = redisDedupeStore(client, {
      prefix: uniquePrefix('dead'),
      waitReplicas: 1,
      waitTimeoutMs: WAIT_MS,
    });
    await onReplica.close();
    await replica.kill();
    expect(((await caught(() => spool.append([spooledEvent(0)]))) as SpoolError).code).toBe('not_replicated');
    expect(((await caught(() => store.complete('evt', 't'))) as StoreError).code).toBe('not_replicated');
    await withReplica();
    expect(await spool.append([spooledEvent(1)])).toHaveLength(1);
    // The rejected complete left its mark on the master: repeated, it answers true, now confirmed.
    expect(await store.complete('evt', 't')).toBe(true);
  }, 30_000);
});
