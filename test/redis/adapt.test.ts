import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../src/index.js';
import { adaptClient, clientKind } from '../../src/redis/adapt.js';
import {
  redisAccessStore,
  redisCooldown,
  redisDedupeStore,
  redisHoldStore,
  redisSpool,
} from '../../src/redis/index.js';
import { keySlot, tagged, tagText } from '../../src/redis/keys.js';

// Which client a store was given, by its shape alone (no Redis package imported by the SDK), and
// how each one's commands are sent: a cluster client routed by the step's key, a keyless WAIT to the
// master owning the key it follows. No server needed: the real clients are never connected.

describe('clientKind: the four clients as applications make them', () => {
  it('node-redis createClient and createCluster, ioredis Redis and Cluster', async () => {
    expect(clientKind(createClient({ url: 'redis://127.0.0.1:1' }))).toBe('node-redis');
    expect(clientKind(createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] }))).toBe(
      'node-redis-cluster',
    );
    const single = new Redis({ port: 1, lazyConnect: true });
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    try {
      expect(clientKind(single)).toBe('ioredis');
      expect(clientKind(cluster)).toBe('ioredis-cluster');
    } finally {
      single.disconnect();
      cluster.disconnect();
    }
  });

  it('each is taken by every part as its package types it, without a cast', () => {
    const single = new Redis({ port: 1, lazyConnect: true });
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    const nodeRedis = createClient({ url: 'redis://127.0.0.1:1' });
    const nodeCluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:1' }] });
    try {
      // Type-checked by tsc (npm run typecheck): a structural type that missed one would not compile.
      const made = [
        redisAccessStore(single),
        redisCooldown(cluster),
        redisDedupeStore(nodeRedis),
        redisSpool(nodeCluster),
        redisDedupeStore(cluster),
        redisAccessStore(nodeCluster),
      ];
      expect(made.every((part) => typeof part === 'object')).toBe(true);
    } finally {
      single.disconnect();
      cluster.disconnect();
    }
  });

  it('an adapter with sendCommand(args) counts as node-redis', () => {
    expect(clientKind({ sendCommand: async () => 1 })).toBe('node-redis');
  });

  it('anything else is none', () => {
    for (const value of [undefined, null, 1, 'redis', {}, { call: () => 1 }, { sendCommand: 'x' }]) {
      expect(clientKind(value)).toBeUndefined();
    }
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(clientKind(proxy)).toBeUndefined();
  });
});

describe('adaptClient: how commands are sent', () => {
  const EVAL = ['EVAL', 'return 1', '1', 'k{a}', 'x'];

  it('node-redis createClient (or an adapter): sendCommand(args), the key unused', async () => {
    const sent: unknown[] = [];
    const runner = adaptClient('op', { sendCommand: async (args: string[]) => sent.push(args) });
    await runner.send(EVAL, 'k{a}');
    expect(sent).toEqual([EVAL]);
  });

  it('node-redis createCluster: sendCommand(key, false, args), WAIT too, with the key of the write', async () => {
    const sent: unknown[] = [];
    const runner = adaptClient('op', {
      masters: [],
      sendCommand: async (...args: unknown[]) => sent.push(args),
    });
    expect(runner.kind).toBe('node-redis-cluster');
    await runner.send(EVAL, 'k{a}');
    await runner.send(['WAIT', '1', '100'], 'k{a}');
    expect(sent).toEqual([
      ['k{a}', false, EVAL],
      ['k{a}', false, ['WAIT', '1', '100']],
    ]);
  });

  it('ioredis Redis: call(name, ...args)', async () => {
    const sent: unknown[] = [];
    const runner = adaptClient('op', {
      isCluster: false,
      call: async (...args: unknown[]) => sent.push(args),
    });
    await runner.send(['WAIT', '1', '100'], 'k');
    expect(sent).toEqual([['WAIT', '1', '100']]);
  });

  it('ioredis Cluster: EVAL through the cluster (it routes by the keys), WAIT to the master owning the key', async () => {
    const sent: unknown[] = [];
    const node = (port: number) => ({
      options: { host: '127.0.0.1', port },
      call: async (...args: unknown[]) => sent.push([port, ...args]),
    });
    const slots: string[][] = [];
    slots[keySlot('k{a}')] = ['127.0.0.1:7002', '127.0.0.1:7005'];
    const cluster = {
      isCluster: true,
      slots,
      nodes: (role: string) => (role === 'master' ? [node(7001), node(7002), node(7003)] : []),
      call: async (...args: unknown[]) => sent.push(['cluster', ...args]),
    };
    const runner = adaptClient('op', cluster);
    await runner.send(EVAL, 'k{a}');
    await runner.send(['WAIT', '1', '100'], 'k{a}');
    expect(sent).toEqual([
      ['cluster', ...EVAL],
      [7002, 'WAIT', '1', '100'],
    ]);
    // Before the cluster knows who owns the slot: a rejection, never a WAIT sent elsewhere.
    await expect(runner.send(['WAIT', '1', '100'], 'other')).rejects.toThrow(
      /no connection to the master of slot/,
    );
  });

  it('a client that throws synchronously: a rejection, never a throw', async () => {
    const runner = adaptClient('op', {
      sendCommand: () => {
        throw new Error('closed');
      },
    });
    await expect(runner.send(EVAL, 'k')).rejects.toThrow('closed');
  });
});

describe('a client none of these: InvalidRequestError naming it, from every part', () => {
  const makers = [redisAccessStore, redisCooldown, redisDedupeStore, redisHoldStore, redisSpool] as ((
    client: never,
  ) => unknown)[];
  for (const bad of [undefined, {}, { call: () => 1 }, { sendCommand: 1 }]) {
    it(`${JSON.stringify(bad) ?? 'undefined'}`, () => {
      for (const make of makers) {
        let error: unknown;
        try {
          make(bad as never);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect(String(error)).toMatch(
          bad === undefined
            ? /: client is required$/
            : /: client must be a Redis client: node-redis \(createClient, createCluster\), ioredis \(Redis, Cluster\)/,
        );
      }
    });
  }
});

describe('keys: hash tags', () => {
  it('keySlot agrees with Redis’s documented values', () => {
    expect(keySlot('foo')).toBe(12_182);
    expect(keySlot('123456789')).toBe(0x31c3 % 16_384);
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
  });

  it('a tag’s text: %, { and } encoded (no string ends it early, two never share it), % when empty', () => {
    expect(tagText('acct_1')).toBe('acct_1');
    expect(tagText('a}b{c%d')).toBe('a%7Db%7Bc%25d');
    expect(tagText('')).toBe('%');
    expect(tagged('p:', 'a}b')).toBe('p:{a%7Db}');
    // Every key of an account shares the account's slot, whatever its characters.
    for (const account of ['acct_1', 'a}b', '{x}', '', 'é€😀']) {
      expect(keySlot(`${tagged('p:', account)}:a:k1`)).toBe(keySlot(`${tagged('p:', account)}:g`));
    }
  });

  it('a prefix with an empty {} where Redis looks for the tag is refused, naming it', () => {
    const client = { sendCommand: async () => 1 };
    expect(() => redisAccessStore(client, { prefix: 'a{}b:' })).toThrow(/prefix.*empty hash tag/);
    expect(() => redisCooldown(client, { prefix: '{}' })).toThrow(/prefix.*empty hash tag/);
    // A tag of the user's own is allowed (everything goes to its slot), and so is a lone brace.
    expect(() => redisAccessStore(client, { prefix: 'app:{t1}:' })).not.toThrow();
    expect(() => redisCooldown(client, { prefix: 'a{b' })).not.toThrow();
  });
});
