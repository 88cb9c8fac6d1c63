import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError, SpoolError } from '../../src/core/errors/index.js';
import { isBillingError } from '../../src/index.js';
import { isTransient } from '../../src/redis/failure.js';
import { type RedisLike, redisSpool } from '../../src/redis/index.js';
import { storeFailure } from '../../src/redis/store-errors.js';
import type { Spool, SpoolEntry } from '../../src/tracker/spool.js';
import { SpoolCore } from '../../src/tracker/spool-core.js';
import { caught } from '../helpers.js';
import { spoolContract, spooledEvent } from '../tracker/spool-contract.js';
import { connectRedis, type NodeRedis, uniquePrefix, useRedisClient } from './connect.js';
import { type RedisServer, startRedisServer, useRedisServer } from './redis-server.js';

const redis = useRedisServer();
const connected = useRedisClient(redis);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// A stable consumer name per place: the contract's reopen is "the same instance, restarted", which
// takes back its own pending entries at once (a random name would wait for claimIdleMs).
const contractPrefix = uniquePrefix('spool-contract');
spoolContract('redisSpool', (place) =>
  redisSpool(connected.client, { stream: `${contractPrefix}${place}`, consumer: place }),
);

/** Spools made by a test, closed after the file (a test that fails midway leaves no timer running). */
const made: Spool[] = [];
afterAll(async () => {
  for (const spool of made) await spool.close().catch(() => {});
});
async function opened(client: RedisLike, options: Parameters<typeof redisSpool>[1]): Promise<Spool> {
  const spool = redisSpool(client, options);
  made.push(spool);
  await spool.open();
  return spool;
}

/** Takes until nothing comes. */
async function drain(spool: Spool, max = 100): Promise<SpoolEntry[]> {
  const out: SpoolEntry[] = [];
  for (;;) {
    const batch = await spool.take(max);
    if (!batch.length) return out;
    out.push(...batch);
  }
}

/** Who holds each pending entry of the group: id → consumer. */
async function owners(
  client: NodeRedis,
  stream: string,
  group = 'billing-sdk',
): Promise<Map<string, string>> {
  const reply = (await client.sendCommand(['XPENDING', stream, group, '-', '+', '10000'])) as [
    string,
    string,
  ][];
  return new Map(reply.map(([id, consumer]) => [id, consumer]));
}

const consumers = async (client: NodeRedis, stream: string, group = 'billing-sdk') =>
  ((await client.sendCommand(['XINFO', 'CONSUMERS', stream, group])) as string[][]).map((c) => c[1]);

describe('redisSpool options', () => {
  it.each([
    [{ claimIdleMs: 0 }, 'options.claimIdleMs'],
    [{ claimIdleMs: 1.5 }, 'options.claimIdleMs'],
    [{ timeoutMs: Number.POSITIVE_INFINITY }, 'options.timeoutMs'],
    [{ timeoutMs: -1 }, 'options.timeoutMs'],
    [{ stream: '' }, 'options.stream'],
    [{ group: 42 }, 'options.group'],
    [{ consumer: '\uD800' }, 'options.consumer'],
    [{ claimIdelMs: 10 }, 'options.claimIdelMs'],
  ])('%o is refused, naming the option', (options, field) => {
    let error: unknown;
    try {
      redisSpool(connected.client, options as Parameters<typeof redisSpool>[1]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues.map((i) => i.field)).toEqual([field]);
    expect((error as Error).message).toMatch(/^redisSpool: /);
  });

  it('a client without sendCommand is refused', () => {
    expect(() => redisSpool({} as RedisLike)).toThrow(/client must be a Redis client/);
  });

  it('defaults: stream billing-sdk:usage, group billing-sdk, a random consumer per spool', async () => {
    const server = await startRedisServer();
    const client = await connectRedis(server.url);
    try {
      const a = await opened(client, {});
      const b = await opened(client, {});
      await a.append([spooledEvent(0)]);
      await a.take(1);
      await b.append([spooledEvent(1)]);
      await b.take(1);
      const held = [...(await owners(client, 'billing-sdk:usage')).values()];
      expect(new Set(held).size).toBe(2);
      for (const name of held) expect(name).toMatch(/^spool-[0-9a-f-]{36}$/);
      await a.close();
      await b.close();
    } finally {
      await client.close();
      await server.stop();
    }
  });
});

describe('redisSpool on a shared stream', () => {
  it('entries carry the event as JSON under its fixed key; acknowledged entries leave the stream', async () => {
    const stream = uniquePrefix('layout');
    const spool = await opened(connected.client, { stream });
    const event = spooledEvent(0, { metadata: { a: 1 } });
    const [id] = await spool.append([event]);
    const entries = (await connected.client.sendCommand(['XRANGE', stream, '-', '+'])) as [
      string,
      string[],
    ][];
    expect(entries).toEqual([[id, ['event', JSON.stringify(event)]]]);
    await spool.take(1);
    await spool.ack([id as string]);
    expect(await connected.client.xLen(stream)).toBe(0);
    expect(await owners(connected.client, stream)).toEqual(new Map());
  });

  it('a dead consumer’s entries are claimed by another after claimIdleMs, with their ids and original keys', async () => {
    const stream = uniquePrefix('claim');
    const claimIdleMs = 300;
    const dead = await opened(connected.client, { stream, claimIdleMs });
    const events = Array.from({ length: 5 }, (_, i) => spooledEvent(i));
    const ids = await dead.append(events);
    const handedAt = Date.now();
    const held = await dead.take(10);
    expect(held.map((e) => e.id)).toEqual(ids);
    // Dying: its heartbeat stops, its entries stay pending under its name.
    await dead.close();
    const survivor = await opened(connected.client, { stream, claimIdleMs });
    expect(await survivor.take(10)).toEqual([]); // not idle long enough yet
    let claimed: SpoolEntry[] = [];
    while (!claimed.length && Date.now() - handedAt < 5_000) {
      await sleep(50);
      claimed = await survivor.take(10);
    }
    // Idle since it was handed (or renewed, later): never claimed sooner than claimIdleMs after.
    expect(Date.now() - handedAt).toBeGreaterThanOrEqual(claimIdleMs - 2);
    expect(claimed.map((e) => e.id)).toEqual(ids);
    expect(claimed.map((e) => e.event)).toEqual(events);
    expect(await survivor.take(10)).toEqual([]); // handed once
    const owner = [...(await owners(connected.client, stream)).values()];
    expect(owner).toHaveLength(5);
    expect(new Set(owner).size).toBe(1);
    await survivor.ack(ids);
    expect(await connected.client.xLen(stream)).toBe(0);
  });

  it('a live consumer keeps its entries past claimIdleMs (renewed); another takes them only once it is gone', async () => {
    const stream = uniquePrefix('renew');
    const claimIdleMs = 300;
    const live = await opened(connected.client, { stream, claimIdleMs });
    const other = await opened(connected.client, { stream, claimIdleMs });
    const ids = await live.append([spooledEvent(0), spooledEvent(1)]);
    expect((await live.take(10)).map((e) => e.id)).toEqual(ids);
    for (let i = 0; i < 6; i++) {
      await sleep(claimIdleMs / 2);
      expect(await other.take(10)).toEqual([]);
    }
    await live.close();
    await sleep(claimIdleMs + 100);
    expect((await other.take(10)).map((e) => e.id)).toEqual(ids);
  });

  it('a stable consumer name takes back its own pending entries at once after a restart', async () => {
    const stream = uniquePrefix('stable');
    const first = await opened(connected.client, { stream, consumer: 'pod-1', claimIdleMs: 60_000 });
    const ids = await first.append([spooledEvent(0), spooledEvent(1)]);
    await first.take(10);
    await first.close();
    const again = await opened(connected.client, { stream, consumer: 'pod-1', claimIdleMs: 60_000 });
    expect((await again.take(10)).map((e) => e.id)).toEqual(ids);
  });

  it('size counts what this consumer will be handed: its own pending entries and the unhanded, never what another holds', async () => {
    const stream = uniquePrefix('size');
    const first = await opened(connected.client, { stream, consumer: 'pod-1', claimIdleMs: 60_000 });
    await first.append([0, 1, 2].map((i) => spooledEvent(i)));
    await first.take(2);
    // pod-1 holds two, one is handed to nobody: all three are pod-1's to send.
    expect(await first.size?.()).toBe(3);
    const other = await opened(connected.client, { stream, consumer: 'pod-2', claimIdleMs: 60_000 });
    expect(await other.size?.()).toBe(1);
    await other.take(10);
    expect(await other.size?.()).toBe(1);
    expect(await first.size?.()).toBe(2);
  });

  it('two spools taking concurrently never both take an entry', async () => {
    const stream = uniquePrefix('disjoint');
    const a = await opened(connected.client, { stream });
    const b = await opened(connected.client, { stream });
    const appended = (
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).append(Array.from({ length: 25 }, (_, j) => spooledEvent(i * 25 + j))),
        ),
      )
    ).flat();
    const [fromA, fromB] = await Promise.all([drain(a, 7), drain(b, 11)]);
    const idsA = fromA.map((e) => e.id);
    const idsB = fromB.map((e) => e.id);
    expect(idsA.length).toBeGreaterThan(0);
    expect(idsB.length).toBeGreaterThan(0);
    expect(idsA.filter((id) => idsB.includes(id))).toEqual([]);
    expect([...idsA, ...idsB].sort()).toEqual([...appended].sort());
    // Still held by each, unacknowledged: neither hands the other's entries.
    expect(await a.take(100)).toEqual([]);
    expect(await b.take(100)).toEqual([]);
  });

  it('replace refuses members acknowledged or claimed elsewhere meanwhile, writing nothing', async () => {
    const stream = uniquePrefix('replace');
    const slow = await opened(connected.client, { stream, claimIdleMs: 60_000 });
    const ids = await slow.append([spooledEvent(0), spooledEvent(1), spooledEvent(2)]);
    const [m1, m2, m3] = ids as [string, string, string];
    await slow.take(3);
    // Another instance with a short claim time takes m1 over (the slow one stalled past it).
    const eager = await opened(connected.client, { stream, claimIdleMs: 20 });
    await sleep(60);
    const claimed = await eager.take(1);
    expect(claimed.map((e) => e.id)).toEqual([m1]);
    const taken = await caught(() => slow.replace([m1, m2], spooledEvent(9, { quantity: 3 })));
    expect(isBillingError(taken, 'SpoolError') && taken.code).toBe('conflict');
    await slow.ack([m3]);
    const gone = await caught(() => slow.replace([m2, m3], spooledEvent(9, { quantity: 5 })));
    expect(isBillingError(gone, 'SpoolError') && gone.code).toBe('conflict');
    expect(await connected.client.xLen(stream)).toBe(2); // m1, m2: no aggregate appended
    expect(await slow.pending(ids)).toEqual([m1, m2]);
  });

  it('an entry another program wrote to the stream is dropped, not handed', async () => {
    const stream = uniquePrefix('foreign');
    const spool = await opened(connected.client, { stream });
    await connected.client.sendCommand(['XADD', stream, '*', 'other', 'x']);
    await connected.client.sendCommand(['XADD', stream, '*', 'event', '{not json']);
    await connected.client.sendCommand(['XADD', stream, '*', 'event', '{"no":"key"}']);
    const [id] = await spool.append([spooledEvent(0)]);
    expect((await spool.take(10)).map((e) => e.id)).toEqual([id]);
    expect(await connected.client.xLen(stream)).toBe(1);
  });

  it('the stream deleted under it (FLUSHALL, a restarted Redis): said once (lost), the group made again, nothing new is lost', async () => {
    const stream = uniquePrefix('deleted');
    const spool = await opened(connected.client, { stream });
    await connected.client.del(stream);
    const ids = await spool.append([spooledEvent(0), spooledEvent(1)]);
    expect(await caught(() => spool.take(10))).toMatchObject({ name: 'SpoolError', code: 'lost' });
    expect((await spool.take(10)).map((e) => e.id)).toEqual(ids);
  });

  it('the stream and the group do not grow without bound: 30 rounds of 200 events leave nothing behind', async () => {
    const stream = uniquePrefix('bounded');
    const spool = await opened(connected.client, { stream });
    let peak = 0;
    for (let round = 0; round < 30; round++) {
      await spool.append(Array.from({ length: 200 }, (_, i) => spooledEvent(round * 200 + i)));
      const taken = await drain(spool, 64);
      expect(taken).toHaveLength(200);
      peak = Math.max(peak, await connected.client.xLen(stream));
      await spool.ack(taken.map((e) => e.id));
    }
    expect(peak).toBe(200);
    expect(await connected.client.xLen(stream)).toBe(0);
    expect(await owners(connected.client, stream)).toEqual(new Map());
    // Freed listpack nodes: the empty stream costs about what a fresh one does.
    expect(Number(await connected.client.sendCommand(['MEMORY', 'USAGE', stream]))).toBeLessThan(2_000);
  });

  it('consumers that hold nothing leave the group: on close, and dead ones on a later open', async () => {
    const stream = uniquePrefix('consumers');
    const claimIdleMs = 100;
    const quiet = await opened(connected.client, { stream, claimIdleMs, consumer: 'quiet' });
    const busy = await opened(connected.client, { stream, claimIdleMs, consumer: 'busy' });
    expect(await quiet.take(1)).toEqual([]); // a read makes it a consumer of the group
    await busy.append([spooledEvent(0)]);
    await busy.take(1);
    expect((await consumers(connected.client, stream)).sort()).toEqual(['busy', 'quiet']);
    await quiet.close();
    await busy.close(); // dies holding an entry: it stays a consumer, its entry pending
    expect(await consumers(connected.client, stream)).toEqual(['busy']);
    // A dead consumer that held nothing (SIGKILLed: no close) is dropped by the next open.
    await connected.client.sendCommand(['XGROUP', 'CREATECONSUMER', stream, 'billing-sdk', 'ghost']);
    await sleep(claimIdleMs + 50);
    const next = await opened(connected.client, { stream, claimIdleMs, consumer: 'next' });
    expect(await consumers(connected.client, stream)).toEqual(['busy']);
    // ... and the dead one that held an entry hands it over once idle, then holds nothing.
    expect((await next.take(10)).map((e) => e.event.quantity)).toEqual([1]);
    expect((await consumers(connected.client, stream)).sort()).toEqual(['busy', 'next']);
  });
});

/** The pid of a server (to SIGKILL or SIGSTOP it), from INFO. */
async function pidOf(client: NodeRedis): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1]);
}

describe('redisSpool when Redis fails: every step rejects typed within timeoutMs, never pretends', () => {
  let server: RedisServer;
  let client: NodeRedis;
  let observer: NodeRedis;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    client?.destroy();
    observer?.destroy();
    await server?.stop();
  });

  const timeoutMs = 300;
  async function expectUnavailable(call: () => Promise<unknown>): Promise<void> {
    const started = performance.now();
    const error = await caught(call);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(SpoolError);
    expect((error as SpoolError).code).toBe('unavailable');
    expect(error.message).toMatch(/^redisSpool\.\w+ on stream /);
    expect(elapsed).toBeLessThan(timeoutMs + 700); // the timeout, not a hang (slack for a loaded machine)
  }

  it('stalled (SIGSTOP): append rejects after timeoutMs, and does not land when Redis resumes', async () => {
    client = await connectRedis(server.url);
    observer = await connectRedis(server.url);
    const stream = uniquePrefix('stalled');
    const spool = await opened(client, { stream, timeoutMs });
    await spool.append([spooledEvent(0)]); // one answer: the spool knows Redis's clock
    const pid = await pidOf(client);
    process.kill(pid, 'SIGSTOP');
    try {
      const late = spooledEvent(1);
      await expectUnavailable(() => spool.append([late]));
      await expectUnavailable(() => spool.take(10));
      await expectUnavailable(() => spool.pending(['1-1']));
      await sleep(200);
      process.kill(pid, 'SIGCONT');
      // The queued append runs now, past its deadline: it must write nothing. Redis runs one
      // connection's commands in order, so once a PING sent after it is answered, it has run.
      expect(await client.sendCommand(['PING'])).toBe('PONG');
      const entries = (await observer.sendCommand(['XRANGE', stream, '-', '+'])) as [string, string[]][];
      expect(entries.map(([, fields]) => JSON.parse(fields[1] as string).event_key)).toEqual([
        expect.stringMatching(/^key-0-/),
      ]);
      // Redis answers again: so does the spool.
      expect(await spool.append([spooledEvent(2)])).toHaveLength(1);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });

  it('gone (SIGKILL): append, take, ack, replace and pending reject typed within timeoutMs', async () => {
    const stream = uniquePrefix('killed');
    const spool = await opened(client, { stream, timeoutMs });
    const [id] = await spool.append([spooledEvent(0)]);
    await spool.take(1);
    process.kill(await pidOf(client), 'SIGKILL');
    await server.stop();
    await expectUnavailable(() => spool.append([spooledEvent(1)]));
    await expectUnavailable(() => spool.take(1));
    await expectUnavailable(() => spool.ack([id as string]));
    await expectUnavailable(() => spool.replace([id as string], spooledEvent(2)));
    await expectUnavailable(() => spool.pending([id as string]));
    await spool.close(); // resolves: nothing to release that needs Redis
  });
});

describe('redisSpool: replies it never expects reject typed too (SpoolError, the reply in the message)', () => {
  it('a stream key of another type (put there by hand): open rejects SpoolError naming WRONGTYPE', async () => {
    const stream = uniquePrefix('wrong-type');
    await connected.client.set(stream, 'not a stream');
    const spool = redisSpool(connected.client, { stream });
    made.push(spool);
    const error = await caught(() => spool.open());
    expect(error).toBeInstanceOf(SpoolError);
    expect((error as SpoolError).code).toBe('io'); // refused for good: trying again cannot help
    expect(error.message).toMatch(/^redisSpool\.open on stream .*WRONGTYPE/);
  });

  it('a reply of another shape (an odd adapter): append and take reject SpoolError, not a TypeError', async () => {
    const spool = await opened({ sendCommand: async () => 'OK' }, { stream: uniquePrefix('odd') });
    for (const call of [() => spool.append([spooledEvent(0)]), () => spool.take(1)]) {
      const error = await caught(call);
      expect(error).toBeInstanceOf(SpoolError);
      expect(error.message).toMatch(/unexpected Redis reply/);
    }
  });
});

describe('billing-sdk/redis: one classifier, connection vs reply, for spool and stores', () => {
  const reply = (message: string) => new Error(message); // how node-redis and ioredis pass an error reply
  const socket = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
  const spool = new SpoolCore({ name: 'redisSpool', place: 'on stream s', transient: isTransient });

  it.each([
    ['a lost connection', socket, true],
    ['a timeout (no answer)', new Error('Redis did not answer within 2000 ms'), true],
    ['LOADING', reply('LOADING Redis is loading the dataset in memory'), true],
    ['READONLY (a failover under way)', reply("READONLY You can't write against a read only replica."), true],
    ['CLUSTERDOWN', reply('CLUSTERDOWN The cluster is down'), true],
    ['TRYAGAIN', reply('TRYAGAIN Multiple keys request during rehashing of slot'), true],
    ['BUSY', reply('BUSY Redis is busy running a script.'), true],
    [
      'WRONGTYPE (another program’s key)',
      reply('WRONGTYPE Operation against a key holding the wrong kind of value'),
      false,
    ],
    ['ERR unknown command (Redis too old)', reply("ERR unknown command 'XAUTOCLAIM'"), false],
    ['NOSCRIPT', reply('NOSCRIPT No matching script.'), false],
  ])('%s → transient: %s, spool and store agree', (_what, error, transient) => {
    expect(isTransient(error)).toBe(transient);
    const fromSpool = spool.failure('append', error) as SpoolError;
    const fromStore = storeFailure('redisDedupeStore.claim', error);
    expect(fromSpool.code).toBe(transient ? 'unavailable' : 'io');
    expect(fromStore.code).toBe(transient ? 'unavailable' : 'unexpected_reply');
    expect(fromSpool.cause).toBe(error);
    expect(fromStore.cause).toBe(error);
  });
});
