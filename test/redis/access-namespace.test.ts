import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAccessCache } from '../../src/index.js';
import { redisAccessStore } from '../../src/redis/index.js';
import { serviceNamespace } from '../../src/util/service-namespace.js';
import { sha256Hex } from '../../src/util/sha256.js';
import { clientFor, useMockServer } from '../helpers.js';
import { useRedisClient } from './connect.js';
import { useRedisServer } from './redis-server.js';

// Issue 47 §3: a shared store whose content comes from the service is namespaced by the client it
// serves. Two services (a sandbox and a live one: each its key and base URL) on one Redis, each
// with the store's default prefix.

const redis = useRedisServer();
const connected = useRedisClient(redis);
const sandbox = useMockServer({ apiKey: 'sandbox-key-1' });
const live = useMockServer({ apiKey: 'live-key-2' });

describe('redisAccessStore with its default prefix, two clients on one Redis', () => {
  it('a sandbox client\'s "yes" is never served to the live client', async () => {
    const account = 'acct_namespaced';
    await sandbox.server.lifecycle.subscribe({ account_ref_id: account });
    const onSandbox = createAccessCache(clientFor(sandbox.server), {
      store: redisAccessStore(connected.client),
    });
    const onLive = createAccessCache(clientFor(live.server), { store: redisAccessStore(connected.client) });
    try {
      expect(await onSandbox.isActive({ account_ref_id: account })).toBe(true);
      // The live service has never heard of the account: its answer, asked of it, is "no".
      expect(await onLive.isActive({ account_ref_id: account })).toBe(false);
      expect(live.server.requests.count({ path: `/api/account/${account}/status/` })).toBe(1);
    } finally {
      await onSandbox.close();
      await onLive.close();
    }
  });

  it('no key of the store holds the API key; each client shares answers with its own service only', async () => {
    const account = 'acct_shared_ok';
    await sandbox.server.lifecycle.subscribe({ account_ref_id: account });
    const one = createAccessCache(clientFor(sandbox.server), { store: redisAccessStore(connected.client) });
    const two = createAccessCache(clientFor(sandbox.server), { store: redisAccessStore(connected.client) });
    try {
      sandbox.server.requests.clear();
      expect(await one.isActive({ account_ref_id: account })).toBe(true);
      expect(await two.isActive({ account_ref_id: account })).toBe(true);
      // The second instance of the same service read the first one's answer from Redis.
      expect(sandbox.server.requests.count({ path: `/api/account/${account}/status/` })).toBe(1);
      const keys = await connected.client.keys('*');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).not.toContain('sandbox-key-1');
        expect(key).not.toContain('live-key-2');
      }
      const service = serviceNamespace('sandbox-key-1', sandbox.server.baseUrl);
      expect(keys.some((key) => key.startsWith(`billing-sdk:access:${service}:`))).toBe(true);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

describe('serviceNamespace', () => {
  it('is SHA-256 as node:crypto computes it, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (text) => {
        expect(sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
    );
    // Lengths around the padding boundaries (55, 56, 64 bytes).
    for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
      const text = 'x'.repeat(n);
      expect(sha256Hex(text)).toBe(createHash('sha256').update(text).digest('hex'));
    }
  });

  it('differs when the key or the base URL does, and never holds the key', () => {
    const key = fc.stringMatching(/^[!-~]{1,40}$/);
    fc.assert(
      fc.property(
        key,
        key,
        fc.constantFrom('https://a.example/api/', 'https://b.example/api/'),
        fc.constantFrom('https://a.example/api/', 'http://a.example/api/'),
        (k1, k2, u1, u2) => {
          const a = serviceNamespace(k1, u1);
          expect(a).toMatch(/^[0-9a-f]{32}$/);
          if (k1.length > 3) expect(a).not.toContain(k1);
          if (k1 !== k2 || u1 !== u2) expect(serviceNamespace(k2, u2)).not.toBe(a);
          else expect(serviceNamespace(k2, u2)).toBe(a);
        },
      ),
    );
  });
});
