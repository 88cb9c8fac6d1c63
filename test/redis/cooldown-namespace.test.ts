import { describe, expect, it } from 'vitest';
import { RateLimitError } from '../../src/index.js';
import { redisCooldown } from '../../src/redis/index.js';
import { caught, clientFor, useMockServer } from '../helpers.js';
import { useRedisClient } from './connect.js';
import { useRedisServer } from './redis-server.js';

// Issue 47 §3: the Redis cooldown is namespaced by the client it serves (a digest of its API key
// and base URL): one service's 429 never holds a client of another, even on the default prefix.

const redis = useRedisServer();
const connected = useRedisClient(redis);
const sandbox = useMockServer({ apiKey: 'sandbox-key-1' });
const live = useMockServer({ apiKey: 'live-key-2' });

describe('redisCooldown with its default prefix, two clients on one Redis', () => {
  it("a sandbox key's 429 holds the sandbox client, never the live one", async () => {
    const cooldown = redisCooldown(connected.client);
    const onSandbox = clientFor(sandbox.server, { cooldown, maxRetries: 0, maxRetryDelay: 1_000 });
    const onLive = clientFor(live.server, { cooldown: redisCooldown(connected.client), maxRetries: 0 });
    sandbox.server.faults.add({ path: '/api/products/', status: 429, headers: { 'retry-after': '60' } });
    expect(await caught(() => onSandbox.products.list())).toBeInstanceOf(RateLimitError);
    // The sandbox client is held (nothing sent) ...
    const held = await caught(() => onSandbox.products.list());
    expect(held).toBeInstanceOf(RateLimitError);
    expect(sandbox.server.requests.count()).toBe(1);
    // ... the live one, on the same Redis and the same prefix, is not.
    await onLive.products.list();
    expect(live.server.requests.count()).toBe(1);
    const keys = await connected.client.keys('*');
    for (const key of keys) expect(key).not.toContain('sandbox-key-1');
  });
});
