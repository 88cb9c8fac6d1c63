import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisClient, redisSpool } from '../../src/redis/index.js';
import { keySlot } from '../../src/redis/keys.js';
import { deadLetterKey } from '../../src/redis/spool-dead-letters.js';
import { deadLetters } from '../../src/tracker/dead-letters.js';
import { type AnyClient, connectAny } from './clients.js';
import { useCluster } from './cluster.js';

// The dead-letter scripts have two keys, the stream and its dead-letter stream: on a Redis Cluster
// they must share a slot, whatever the stream's name (with a hash tag of its own or without).

const ref = useCluster();
const KINDS = ['node-redis-cluster', 'ioredis-cluster'] as const;
const clients = new Map<string, AnyClient>();
beforeAll(async () => {
  for (const kind of KINDS) clients.set(kind, await connectAny(kind, ref.cluster.rootNodes));
}, 30_000);
afterAll(async () => {
  await Promise.all([...clients.values()].map((c) => c.close()));
});

describe('the dead-letter stream of a redisSpool', () => {
  it('is in its stream’s slot, for names with and without a hash tag', () => {
    for (const stream of ['billing-sdk:usage', 'app:{tenant}:usage', 'a}b', '{}x', 'x{y', 'u{v}w{z}']) {
      expect(keySlot(deadLetterKey(stream)), stream).toBe(keySlot(stream));
    }
    expect(deadLetterKey('app:{tenant}:usage')).toBe('app:{tenant}:usage:dead-letters');
  });

  describe.each(KINDS)('on a Redis Cluster with %s', (kind) => {
    it('deadLetter, list, replay and drop run (no CROSSSLOT), default stream and a tagged one', async () => {
      for (const stream of [undefined, `app:{${kind}}:usage`]) {
        const spool = redisSpool(clients.get(kind)!.client as RedisClient, stream ? { stream } : {});
        await spool.open();
        const event = (n: number) => ({
          account_ref_id: 'acct_1',
          product_code: 'api',
          meter_code: 'calls',
          quantity: n,
          event_key: `${kind}-${stream}-${n}-${Date.now()}`,
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
  });
});
