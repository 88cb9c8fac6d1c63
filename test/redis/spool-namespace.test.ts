import { describe, expect, it } from 'vitest';
import { createUsageTracker, deadLetters, InvalidRequestError } from '../../src/index.js';
import { redisSpool } from '../../src/redis/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { serviceNamespace } from '../../src/util/service-namespace.js';
import { clientFor, useMockServer } from '../helpers.js';
import { uniquePrefix, useRedisClient } from './connect.js';
import { useRedisServer } from './redis-server.js';

// Issue 51 §2: two services (a live and a sandbox gateway: each its key and base URL) with
// `redisSpool(redis)` defaults on one Redis. Each tracker writes to its service's stream, so each
// relay sends its own events only, with its own key, to its own service.

const redis = useRedisServer();
const connected = useRedisClient(redis);
const live = useMockServer({ apiKey: 'live-key-51' });
const sandbox = useMockServer({ apiKey: 'sandbox-key-51' });

const event = (quantity: number) => ({
  account_ref_id: 'acct_active',
  product_code: 'api-gateway',
  meter_code: 'api_calls',
  quantity,
});
/** The units `server` recorded of the events `keys` (its ledger holds demo usage too). */
const unitsOf = (server: MockServer, keys: readonly string[]) =>
  keys.reduce((sum, key) => sum + (server.store.usageEvent(key)?.quantity ?? 0), 0);
const streamOf = (server: MockServer) =>
  `billing-sdk:usage:${serviceNamespace(server.apiKey, server.baseUrl)}`;

/** Tracks `n` events of `quantity` through a writer (`relay: false`) of the server's service. */
async function write(server: MockServer, n: number, quantity: number, stream?: string): Promise<string[]> {
  const spool = redisSpool(connected.client, stream === undefined ? {} : { stream });
  const writer = createUsageTracker(clientFor(server), { spool, relay: false });
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push((await writer.track(event(quantity))).event_key);
  await writer.close();
  return keys;
}

/** A relay of the server's service on the default spool: sends what it finds, then closes. */
async function relay(server: MockServer): Promise<void> {
  const tracker = createUsageTracker(clientFor(server), { spool: redisSpool(connected.client) });
  try {
    await tracker.flush();
  } finally {
    expect((await tracker.close()).unsent).toBe(0);
  }
}

describe('redisSpool defaults, two services on one Redis', () => {
  it("each service's stream holds its events; each relay sends only its own, with its own key", async () => {
    const liveKeys = await write(live.server, 10, 1);
    const sandboxKeys = await write(sandbox.server, 6, 1000);
    const all = [...liveKeys, ...sandboxKeys];
    // One stream per service, named by its namespace (never by the key), and none shared.
    expect(await connected.client.xLen(streamOf(live.server))).toBe(10);
    expect(await connected.client.xLen(streamOf(sandbox.server))).toBe(6);
    expect(await connected.client.exists('billing-sdk:usage')).toBe(0);
    for (const key of await connected.client.keys('*')) expect(key).not.toMatch(/key-51/);

    // The live relay runs alone first: with one shared stream it took the sandbox's events too.
    await relay(live.server);
    expect(unitsOf(live.server, all)).toBe(10);
    expect(unitsOf(sandbox.server, all)).toBe(0);
    await relay(sandbox.server);
    expect(unitsOf(sandbox.server, all)).toBe(6000);
    expect(unitsOf(live.server, all)).toBe(10);
    for (const key of sandboxKeys) expect(live.server.store.usageEvent(key)).toBeUndefined();
  });

  it('a stream given by name is used as it is, whichever service writes to it', async () => {
    const stream = `${uniquePrefix('named')}usage`;
    await write(live.server, 1, 1, stream);
    await write(sandbox.server, 1, 1, stream);
    expect(await connected.client.xLen(stream)).toBe(2);
    expect(await connected.client.keys(`${stream}:*`)).toEqual([]);
  });

  it('a spool used on its own, outside a tracker, keeps the bare default stream', async () => {
    const spool = redisSpool(connected.client);
    await spool.open();
    try {
      await spool.append([{ ...event(1), event_key: 'alone-1' }]);
      expect(await connected.client.xLen('billing-sdk:usage')).toBe(1);
    } finally {
      await spool.close();
      await connected.client.del('billing-sdk:usage');
    }
  });

  it("deadLetters refuses a spool without a stream name: the tracker's letters are under its service's", () => {
    const error = (() => {
      try {
        deadLetters(redisSpool(connected.client));
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).issues).toEqual([
      { field: 'spool', message: expect.stringContaining('names no stream or table') },
    ]);
    expect(() => deadLetters(redisSpool(connected.client, { stream: streamOf(live.server) }))).not.toThrow();
  });
});
