import { describe, expect, it } from 'vitest';
import { type CooldownGrant, isBillingError, memoryCooldown, StoreError } from '../../src/index.js';
import { type RedisLike, redisCooldown } from '../../src/redis/index.js';
import { realClock } from '../../src/util/clock.js';
import { clientFor, useMockServer } from '../helpers.js';
import { connectRedis, uniquePrefix, useRedisClient } from './connect.js';
import { cooldownContract } from './cooldown-contract.js';
import { startRedisServer, useRedisServer } from './redis-server.js';

const redis = useRedisServer();
const connected = useRedisClient(redis);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const isGo = (grant: CooldownGrant) => 'release' in grant;
/** A key of the cooldown of `prefix`: the prefix is also the keys' hash tag (src/redis/keys.ts). */
const cooldownKey = (prefix: string, name: string) => `${prefix}{${prefix}}:${name}`;

cooldownContract('memoryCooldown', async () => {
  let now = 1_000_000;
  return {
    cooldown: memoryCooldown(),
    now: () => now,
    advance: async (ms) => {
      now += ms;
    },
  };
});

cooldownContract('redisCooldown', async () => ({
  cooldown: redisCooldown(connected.client, { prefix: uniquePrefix('cooldown') }),
  now: () => Date.now(),
  advance: sleep,
}));

describe('redisCooldown across processes (two cooldowns on one Redis stand for two processes)', () => {
  it('a 429 seen by one holds the other; after the window only one of them probes', async () => {
    const prefix = uniquePrefix('shared');
    const a = redisCooldown(connected.client, { prefix });
    const b = redisCooldown(connected.client, { prefix });
    const grant = await a.acquire(Date.now());
    if (!isGo(grant)) throw new Error('expected to go');
    await grant.release(Date.now(), 150);
    expect(await b.acquire(Date.now())).toEqual({ waitMs: expect.any(Number) });
    await sleep(170);
    const answers = await Promise.all([a.acquire(Date.now()), b.acquire(Date.now()), b.acquire(Date.now())]);
    expect(answers.filter(isGo)).toHaveLength(1);
  });

  it('a prober that never answers (crashed) holds the others only until its lease ends', async () => {
    const prefix = uniquePrefix('lease');
    const cooldown = redisCooldown(connected.client, { prefix, probeLeaseMs: 100 });
    const first = await cooldown.acquire(Date.now());
    if (!isGo(first)) throw new Error('expected to go');
    await first.release(Date.now(), 1); // a 1 ms window
    await sleep(5);
    expect(isGo(await cooldown.acquire(Date.now()))).toBe(true); // the probe, never released
    const held = await cooldown.acquire(Date.now());
    expect('waitMs' in held && held.waitMs <= 100).toBe(true);
    await sleep(120);
    expect(isGo(await cooldown.acquire(Date.now()))).toBe(true); // the next probe
  });

  it('the crashed prober’s late answer does not end the new probe’s lease', async () => {
    const prefix = uniquePrefix('late');
    const cooldown = redisCooldown(connected.client, { prefix, probeLeaseMs: 60 });
    const first = await cooldown.acquire(Date.now());
    if (!isGo(first)) throw new Error('expected to go');
    await first.release(Date.now(), 1);
    await sleep(5);
    const stale = await cooldown.acquire(Date.now());
    await sleep(80);
    const fresh = await cooldown.acquire(Date.now());
    if (!isGo(stale) || !isGo(fresh)) throw new Error('expected two probes in turn');
    await stale.release(Date.now(), undefined); // the cooldown is over: the service answered
    expect(await connected.client.exists(cooldownKey(prefix, 'cooling'))).toBe(0);
    expect(await connected.client.get(cooldownKey(prefix, 'probe'))).not.toBeNull(); // the fresh probe's lease stands
  });
});

describe('redisCooldown fails open', () => {
  it('a client that rejects: the request goes, onError is told, Redis is left alone for a pause', async () => {
    let sent = 0;
    const broken: RedisLike = {
      sendCommand: () => {
        sent++;
        return Promise.reject(new Error('ECONNREFUSED'));
      },
    };
    const errors: unknown[] = [];
    const cooldown = redisCooldown(broken, {
      onError: (e) => void errors.push(e),
      pauseAfterErrorMs: 1_000,
    });
    const grant = await cooldown.acquire(0);
    expect(isGo(grant)).toBe(true);
    // Its 429 cannot be recorded either: reported, not thrown (the SDK awaits release after each attempt).
    if (isGo(grant)) await grant.release(10, 1_000);
    expect(isGo(await cooldown.acquire(500))).toBe(true);
    expect(sent).toBe(1);
    expect(isGo(await cooldown.acquire(1_100))).toBe(true);
    expect(sent).toBe(2);
    expect(errors.map(String)).toEqual([
      'StoreError: redisCooldown.acquire: Redis failed: ECONNREFUSED',
      'StoreError: redisCooldown.acquire: Redis failed: ECONNREFUSED',
    ]);
    expect((errors[0] as StoreError).cause).toEqual(new Error('ECONNREFUSED'));
  });

  it('a client that never answers: the request goes after timeoutMs', async () => {
    const hung: RedisLike = { sendCommand: () => new Promise(() => {}) };
    const errors: unknown[] = [];
    const cooldown = redisCooldown(hung, { timeoutMs: 30, onError: (e) => void errors.push(e) });
    expect(isGo(await cooldown.acquire(Date.now()))).toBe(true);
    expect(String(errors[0])).toContain('within 30 ms');
  });

  it('an onError that throws changes nothing', async () => {
    const broken: RedisLike = { sendCommand: () => Promise.reject(new Error('down')) };
    const cooldown = redisCooldown(broken, {
      onError: () => {
        throw new Error('reporter broken');
      },
    });
    expect(isGo(await cooldown.acquire(0))).toBe(true);
  });

  describe('a BillingClient whose Redis went away', () => {
    const mock = useMockServer();
    it('keeps sending requests, and reports the outage', async () => {
      const doomed = await startRedisServer();
      const lost = await connectRedis(doomed.url);
      try {
        const errors: unknown[] = [];
        const cooldown = redisCooldown(lost, { timeoutMs: 200, onError: (e) => void errors.push(e) });
        const billing = clientFor(mock.server, { cooldown }, realClock);
        await billing.products.list();
        await doomed.stop();
        await billing.products.list();
        await billing.products.list();
        expect(mock.server.requests.count()).toBe(3);
        expect(errors.length).toBeGreaterThanOrEqual(1);
      } finally {
        lost.destroy();
        await doomed.stop();
      }
    });
  });
});

describe('redisCooldown failures reach onError typed: a StoreError with its code', () => {
  it('a Redis killed (SIGKILL): the request goes, onError gets StoreError unavailable', async () => {
    const doomed = await startRedisServer();
    const lost = await connectRedis(doomed.url);
    try {
      const errors: unknown[] = [];
      const cooldown = redisCooldown(lost, { timeoutMs: 300, onError: (e) => void errors.push(e) });
      expect(isGo(await cooldown.acquire(Date.now()))).toBe(true);
      expect(errors).toEqual([]);
      await doomed.kill();
      expect(isGo(await cooldown.acquire(Date.now()))).toBe(true);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(StoreError);
      expect(isBillingError(errors[0], 'StoreError') && errors[0].code).toBe('unavailable');
      expect(String(errors[0])).toMatch(/^StoreError: redisCooldown\.acquire: Redis failed: /);
    } finally {
      lost.destroy();
      await doomed.stop();
    }
  });

  it('a probe key of another type (put there by hand): the probe’s answer tells onError StoreError unexpected_reply', async () => {
    const prefix = uniquePrefix('wrong-type');
    const errors: unknown[] = [];
    const cooldown = redisCooldown(connected.client, { prefix, onError: (e) => void errors.push(e) });
    await connected.client.set(cooldownKey(prefix, 'cooling'), '1');
    const probe = await cooldown.acquire(Date.now());
    if (!isGo(probe)) throw new Error('expected the probe');
    await connected.client.del(cooldownKey(prefix, 'probe'));
    await connected.client.hSet(cooldownKey(prefix, 'probe'), 'not', 'ours');
    await probe.release(Date.now(), undefined);
    expect(isBillingError(errors[0], 'StoreError') && errors[0].code).toBe('unexpected_reply');
    expect(String(errors[0])).toMatch(/^StoreError: redisCooldown\.release: .*WRONGTYPE/);
  });

  it('a reply of another shape (an odd adapter): the request goes, onError gets StoreError unexpected_reply', async () => {
    const errors: unknown[] = [];
    const cooldown = redisCooldown(
      { sendCommand: async () => 'OK' },
      { onError: (e) => void errors.push(e) },
    );
    expect(isGo(await cooldown.acquire(0))).toBe(true);
    expect(isBillingError(errors[0], 'StoreError') && errors[0].code).toBe('unexpected_reply');
    expect(String(errors[0])).toBe('StoreError: redisCooldown.acquire: unexpected Redis reply "OK"');
  });
});
