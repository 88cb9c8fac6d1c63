// A stream (or its consumer group) that vanishes under a redisSpool (FLUSHALL, a restart without
// persistence, an eviction, a failover to an empty replica) is a SpoolError 'lost', heard by
// onError: what it held is never taken as "sent elsewhere", and close counts it unsent.
import { describe, expect, it } from 'vitest';
import { SpoolError } from '../../src/core/errors/index.js';
import { BillingClient, createUsageTracker } from '../../src/index.js';
import { redisSpool } from '../../src/redis/index.js';
import { caught, useMockServer } from '../helpers.js';
import { until } from '../postgres/poll.js';
import { spooledEvent } from '../tracker/spool-contract.js';
import { uniquePrefix, useRedisClient } from './connect.js';
import { useRedisServer } from './redis-server.js';

const redis = useRedisServer();
const connected = useRedisClient(redis);
const mock = useMockServer();
const prefix = uniquePrefix('spool-lost');
let streams = 0;

describe('redisSpool: a stream lost under it', () => {
  it('pending and take reject with SpoolError lost; the old ids are never answered as acknowledged', async () => {
    const stream = `${prefix}${++streams}`;
    const spool = redisSpool(connected.client, { stream });
    await spool.open();
    try {
      const ids = await spool.append([spooledEvent(1), spooledEvent(2), spooledEvent(3)]);
      await spool.take(1);
      await connected.client.del(stream);
      const pending = await caught(() => spool.pending(ids));
      expect(pending).toBeInstanceOf(SpoolError);
      expect((pending as SpoolError).code).toBe('lost');
      const take = await caught(() => spool.take(10));
      expect((take as SpoolError).code).toBe('lost');
      // The group is made again: new events go on; the old ones are not "acknowledged elsewhere".
      expect(await spool.pending(ids)).toEqual(ids);
      const [fresh] = await spool.append([spooledEvent(4)]);
      expect((await spool.take(10)).map((e) => e.id)).toEqual([fresh]);
      await spool.ack([fresh as string]);
      expect(await spool.pending([fresh as string])).toEqual([]);
    } finally {
      await spool.close();
    }
  });

  it('a tracker: onError hears it, and close counts what was lost unsent (recorded + unsent = tracked)', async () => {
    const stream = `${prefix}${++streams}`;
    mock.server.faults.add({
      method: 'POST',
      path: '/api/usage/events/',
      status: 503,
      times: Number.POSITIVE_INFINITY,
    });
    const errors: unknown[] = [];
    const billing = new BillingClient({
      baseUrl: mock.server.baseUrl,
      apiKey: mock.server.apiKey,
      maxRetries: 0,
    });
    const usage = createUsageTracker(billing, {
      spool: redisSpool(connected.client, { stream }),
      concurrency: 1,
      onError: (error) => errors.push(error),
    });
    const keys: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { event_key } = await usage.track({
        account_ref_id: 'acct_active',
        product_code: 'api-gateway',
        meter_code: 'api_calls',
        quantity: 1,
      });
      keys.push(event_key);
    }
    await until('a send failed', () => errors.length > 0);
    await connected.client.del(stream);
    mock.server.faults.clear();
    await until(
      'the loss reported',
      () => errors.some((e) => e instanceof SpoolError && e.code === 'lost'),
      15_000,
    );
    const { unsent } = await usage.close({ timeoutMs: 1_500 });
    const recorded = mock.server.store.usageEvents.filter((e) => keys.includes(e.event_key)).length;
    // Whatever the tracker still held may have been sent after the loss; none is counted as sent elsewhere.
    expect(recorded + unsent).toBe(20);
  }, 30_000);
});
