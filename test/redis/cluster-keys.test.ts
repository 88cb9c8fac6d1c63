import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CooldownGrant } from '../../src/index.js';
import { adaptClient } from '../../src/redis/adapt.js';
import { evalScript } from '../../src/redis/client.js';
import {
  type RedisClient,
  redisAccessStore,
  redisCooldown,
  redisDedupeStore,
  redisSpool,
} from '../../src/redis/index.js';
import { keySlot, tagged } from '../../src/redis/keys.js';
import * as access from '../../src/redis/lua/access.js';
import * as cooldown from '../../src/redis/lua/cooldown.js';
import { deadLetterKey } from '../../src/redis/spool-dead-letters.js';
import { deadLetters } from '../../src/tracker/dead-letters.js';
import { type AnyClient, connectAny } from './clients.js';
import { useCluster } from './cluster.js';
import { waitUntil } from './processes.js';

// Every public operation of billing-sdk/redis on a Redis Cluster (3 masters, 3 replicas) with the
// DEFAULT options, through node-redis's createCluster and ioredis's Cluster passed as they are: no
// step fails (no CROSSSLOT, no MOVED left to the caller), WAIT reaches the master that took the
// write, and the keys of many accounts and ids spread over the masters. And each script run twice
// (ioredis resends a command whose connection dropped) answers as its first run did.

const ref = useCluster();
const KINDS = ['node-redis-cluster', 'ioredis-cluster'] as const;
const clients = new Map<string, AnyClient>();
beforeAll(async () => {
  for (const kind of KINDS) clients.set(kind, await connectAny(kind, ref.cluster.rootNodes));
}, 30_000);
afterAll(async () => {
  await Promise.all([...clients.values()].map((c) => c.close()));
});
// The default prefixes are shared by both kinds: each starts from an empty cluster.
beforeEach(async () => {
  for (const node of ref.cluster.nodes.filter((n) => n.role === 'master'))
    await ref.cluster.cli(node.port, 'FLUSHALL');
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How many masters hold at least one key matching `pattern` (SCAN on each master). */
async function mastersHolding(pattern: string): Promise<number> {
  let holding = 0;
  for (const node of ref.cluster.nodes.filter((n) => n.role === 'master')) {
    const keys = (await ref.cluster.cli(node.port, '--scan', '--pattern', pattern)).trim();
    if (keys) holding++;
  }
  return holding;
}

describe.each(KINDS)('every operation on a Redis Cluster with %s, default options', (kind) => {
  const client = () => clients.get(kind)!.client as RedisClient;

  it('redisAccessStore: read, write, release, invalidate, watch; accounts spread over the masters', async () => {
    const errors: unknown[] = [];
    const store = redisAccessStore(client());
    const told: (string | undefined)[] = [];
    const stop = store.watch(
      (account) => void told.push(account),
      (e) => void errors.push(e),
    );
    try {
      // The watch's first poll ran (it made the stream's meta hash): it reads from where the stream was.
      const meta = `${tagged('billing-sdk:access:', 'billing-sdk:access:')}:meta`;
      await waitUntil(
        'the watch’s first poll',
        async () => Number(await clients.get(kind)!.command(['EXISTS', meta])) === 1,
      );
      const accounts = Array.from({ length: 24 }, (_, i) => `acct_${kind}_${i}`);
      for (const account of accounts) {
        const first = await store.read(`${account}:status`, account, 5_000);
        expect(first.leased).toBe(true);
        expect(
          await store.write(`${account}:status`, account, first.generation, { ok: 1 }, 30_000, 60_000),
        ).toBe(true);
        const again = await store.read(`${account}:status`, account, 5_000);
        expect(again.answer?.value).toEqual({ ok: 1 });
        const other = await store.read(`${account}:other`, account, 5_000);
        expect(other.leased).toBe(true);
        await store.release(`${account}:other`);
      }
      expect(await mastersHolding('billing-sdk:access:{acct_*')).toBe(3);
      await store.invalidate(accounts[0]!);
      const after = await store.read(`${accounts[0]}:status`, accounts[0]!, 5_000);
      expect(after.answer).toBeUndefined();
      await expect.poll(() => told, { timeout: 5_000 }).toContain(accounts[0]);
      expect(errors).toEqual([]);
    } finally {
      stop();
    }
  });

  it('redisDedupeStore: claim, renew, complete (with waitReplicas: 1 too), release; ids spread', async () => {
    const store = redisDedupeStore(client());
    const replicated = redisDedupeStore(client(), { waitReplicas: 1 });
    for (let i = 0; i < 24; i++) {
      const id = `tx_${kind}_${i}`;
      expect(await store.claim(id, 't', 30_000)).toBe('claimed');
      expect(await store.renew(id, 't', 30_000)).toBe(true);
      // WAIT goes to the master that took the done mark: its replica confirms it.
      expect(await (i % 2 ? replicated : store).complete(id, 't')).toBe(true);
      expect(await store.claim(id, 'u', 30_000)).toBe('done');
      expect(await store.claim(`${id}:b`, 't', 30_000)).toBe('claimed');
      await store.release(`${id}:b`, 't');
      expect(await store.claim(`${id}:b`, 'u', 30_000)).toBe('claimed');
    }
    expect(await mastersHolding('billing-sdk:webhook:tx_*')).toBe(3);
    // The gate's replay: the answer lives in the id's own key, read back on whichever master holds it.
    expect(await store.claim(`gate_${kind}`, 't', 30_000)).toBe('claimed');
    expect(await store.complete(`gate_${kind}`, 't', '{"status":201}')).toBe(true);
    expect(await replicated.answer?.(`gate_${kind}`)).toBe('{"status":201}');
  });

  it('redisCooldown: free, a 429 opens a window every caller waits out, one probe ends it', async () => {
    const errors: unknown[] = [];
    const cooldown = redisCooldown(client(), { onError: (e) => void errors.push(e), pollIntervalMs: 10 });
    const go = (grant: CooldownGrant) => {
      if (!('release' in grant)) throw new Error(`expected to go, got ${JSON.stringify(grant)}`);
      return grant;
    };
    await go(await cooldown.acquire(Date.now())).release(Date.now(), 200);
    const waiting = await cooldown.acquire(Date.now());
    expect('waitMs' in waiting && waiting.waitMs).toBeGreaterThan(0);
    await sleep(250);
    const probe = go(await cooldown.acquire(Date.now()));
    const held = await cooldown.acquire(Date.now());
    expect('waitMs' in held).toBe(true); // the probe is out: the others wait for it
    await probe.release(Date.now(), undefined);
    go(await cooldown.acquire(Date.now()));
    expect(errors).toEqual([]);
    // The three keys are in one slot: the slot of the prefix's own tag.
    expect(keySlot('billing-sdk:cooldown:{billing-sdk:cooldown:}:wait')).toBe(
      keySlot('{billing-sdk:cooldown:}'),
    );
  });

  it('redisSpool: open, append (with waitReplicas: 1 too), take, replace, ack, pending, size, close', async () => {
    const spool = redisSpool(client());
    const replicated = redisSpool(client(), { waitReplicas: 1 });
    await spool.open();
    await replicated.open();
    const event = (n: number) => ({
      account_ref_id: 'acct_1',
      product_code: 'api',
      meter_code: 'calls',
      quantity: n,
      event_key: `${kind}-${n}`,
    });
    const ids = await spool.append([event(1), event(2), event(3)]);
    const more = await replicated.append([event(4)]);
    expect(ids).toHaveLength(3);
    expect(more).toHaveLength(1);
    expect(await spool.size?.()).toBe(4);
    const taken = await spool.take(10);
    expect(taken.map((e) => e.event.quantity).sort()).toEqual([1, 2, 3, 4]);
    const aggregate = await spool.replace([ids[0]!, ids[1]!], { ...event(3), event_key: `${kind}-agg` });
    expect(await spool.pending([ids[0]!, ids[2]!, aggregate])).toEqual([ids[2], aggregate]);
    await spool.ack([ids[2]!, more[0]!, aggregate]);
    expect(await spool.pending([...ids, ...more, aggregate])).toEqual([]);
    expect(await spool.size?.()).toBe(0);
    await spool.close();
    await replicated.close();
  });

  it('redisSpool dead letters: deadLetter, list, replay, drop (two keys: the stream and its dead-letter stream, one slot), default and tagged streams', async () => {
    for (const stream of ['billing-sdk:usage', `app:{${kind}}:usage`, 'a}b', '{}x']) {
      expect(keySlot(deadLetterKey(stream)), stream).toBe(keySlot(stream));
    }
    // The bare default and a service's default name, as given: deadLetters refuses a spool without one.
    for (const stream of [
      'billing-sdk:usage',
      `billing-sdk:usage:${'ab'.repeat(16)}`,
      `app:{${kind}}:usage`,
    ]) {
      const spool = redisSpool(client(), { stream });
      await spool.open();
      const event = (n: number) => ({
        account_ref_id: 'acct_1',
        product_code: 'api',
        meter_code: 'calls',
        quantity: n,
        event_key: `${kind}-${stream}-${n}`,
      });
      const ids = await spool.append([event(1), event(2)]);
      await spool.take(10);
      const reason = { type: 'error' as const, name: 'BadRequestError', message: 'no meter', status: 400 };
      await spool.deadLetter?.(
        ids.map((id) => ({ id, reason, attempts: 1, firstAttemptAt: '', deadLetteredAt: '' })),
      );
      const letters = deadLetters(spool);
      const kept = await letters.list();
      expect(kept.map((letter) => letter.event.quantity)).toEqual([1, 2]);
      expect(await letters.replay([kept[0]!.id])).toEqual([kept[0]!.id]);
      const back = await spool.take(10);
      expect(back.map((entry) => entry.event.event_key)).toEqual([kept[0]!.event.event_key]);
      await spool.ack(back.map((entry) => entry.id));
      expect(await letters.drop('all')).toEqual([kept[1]!.id]);
      expect(await spool.pending(ids)).toEqual([]);
      await spool.close();
    }
  });

  it('a prefix holding a tag of its own puts every key in that one slot, and still works', async () => {
    const store = redisAccessStore(client(), { prefix: 'app:{tenant-1}:access:' });
    for (let i = 0; i < 6; i++) {
      const read = await store.read(`k${i}`, `acct_${i}`, 5_000);
      expect(await store.write(`k${i}`, `acct_${i}`, read.generation, i, 30_000, 60_000)).toBe(true);
      await store.invalidate(`acct_${i}`);
    }
    expect(await mastersHolding('app:{tenant-1}:*')).toBe(1);
  });
});

describe.each(KINDS)(
  'each script run twice with the same arguments (a resend after a lost answer), %s',
  (kind) => {
    const runner = () => adaptClient('test', clients.get(kind)!.client);
    const run = (script: string, keys: string[], args: (string | number)[]) =>
      evalScript(runner(), script, keys, args, 2_000);

    it('access READ takes the lease and answers leased both times; WRITE stores both times', async () => {
      const base = tagged('billing-sdk:access:', 'acct_twice');
      const keys = [`${base}:a:k`, `${base}:l:k`, `${base}:g`];
      const first = (await run(access.READ, keys, [5_000, 'token-1', 60_000])) as unknown[];
      const again = (await run(access.READ, keys, [5_000, 'token-1', 60_000])) as unknown[];
      expect([first[1], again[1]]).toEqual([1, 1]);
      expect(again[0]).toBe(first[0]);
      // Another token meanwhile does not get it.
      expect(((await run(access.READ, keys, [5_000, 'token-2', 60_000])) as unknown[])[1]).toBe(0);
      const json = JSON.stringify({ v: 1, ttl: 30_000, life: 60_000 });
      const write = [...keys, `${base}:k`];
      expect(await run(access.WRITE, write, [String(first[0]), json, 60_000, 'token-1'])).toBe(1);
      expect(await run(access.WRITE, write, [String(first[0]), json, 60_000, 'token-1'])).toBe(1);
      // DROP twice: two invalidations, the answer gone, the old generation refused.
      expect(await run(access.DROP, [`${base}:g`, `${base}:k`], ['e', 60_000])).toBe(1);
      expect(await run(access.DROP, [`${base}:g`, `${base}:k`], ['e', 60_000])).toBe(2);
      expect(await run(access.WRITE, write, [String(first[0]), json, 60_000, ''])).toBe(0);
    });

    it('cooldown ACQUIRE answers probe both times with one token; COOL and END twice change nothing more', async () => {
      const base = tagged('twice:', 'twice:');
      const keys = [`${base}:wait`, `${base}:cooling`, `${base}:probe`];
      await run(cooldown.COOL, keys, [0, '', 60_000]); // a 429 without a window: the next request probes
      expect(await run(cooldown.ACQUIRE, keys, ['p1', 10_000])).toEqual(['probe']);
      expect(await run(cooldown.ACQUIRE, keys, ['p1', 10_000])).toEqual(['probe']);
      expect(((await run(cooldown.ACQUIRE, keys, ['p2', 10_000])) as unknown[])[0]).toBe('held');
      expect(await run(cooldown.END, keys, ['p1'])).toBe(1);
      expect(await run(cooldown.END, keys, ['p1'])).toBe(1);
      expect(await run(cooldown.ACQUIRE, keys, ['p3', 10_000])).toEqual(['free']);
    });
  },
);
