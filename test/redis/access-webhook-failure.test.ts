import { describe, expect, it } from 'vitest';
import { createAccessCache, createWebhookHandler, StoreError } from '../../src/index.js';
import { redisAccessStore } from '../../src/redis/index.js';
import { clientFor, serveFetch, useMockServer } from '../helpers.js';
import { event } from '../webhooks/event.js';
import { connectRedis } from './connect.js';
import { startRedisServer } from './redis-server.js';

// Issue 47 §3: a failed invalidation is heard. With redisAccessStore and Redis down, a cancellation
// delivery used to be answered 200 (the store's failure swallowed), so every other instance kept
// the cancelled account's "yes" until its ttl and the service never delivered again.

const mock = useMockServer();
const statusPath = (account: string) => `/api/account/${account}/status/`;

describe('a webhook receiver with redisAccessStore whose Redis is down', () => {
  it('drops the local answer, tells onError, answers 5xx (so the sender delivers again), skips onEvent', async () => {
    const redis = await startRedisServer();
    const client = await connectRedis(redis.url);
    const errors: unknown[] = [];
    const handlerErrors: unknown[] = [];
    const access = createAccessCache(clientFor(mock.server), {
      store: redisAccessStore(client, { timeoutMs: 200 }),
      onError: (e) => void errors.push(e),
    });
    let ran = 0;
    const receiver = await serveFetch(
      createWebhookHandler({
        access,
        onEvent: () => {
          ran++;
        },
        onError: (e) => void handlerErrors.push(e),
      }),
    );
    try {
      const account = 'acct_active';
      expect(await access.isActive({ account_ref_id: account })).toBe(true);
      await redis.stop();
      mock.server.store.setSubscriptionActive(
        mock.server.store.subscriptions(account)[0]?.subscription_id as string,
        false,
      );
      const response = await fetch(`${receiver.url}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event({ account_ref_id: account, is_active: false })),
      });
      expect(response.status).toBeGreaterThanOrEqual(500);
      expect(ran).toBe(0);
      expect(errors.some((e) => e instanceof StoreError)).toBe(true);
      expect(handlerErrors.some((e) => e instanceof StoreError)).toBe(true);
      // This instance's answer went: the next lookup asks the service and sees the cancellation.
      const before = mock.server.requests.count({ path: statusPath(account) });
      expect(await access.isActive({ account_ref_id: account })).toBe(false);
      expect(mock.server.requests.count({ path: statusPath(account) })).toBe(before + 1);
    } finally {
      await receiver.close();
      await access.close();
      client.destroy();
      await redis.stop().catch(() => {});
    }
  }, 20_000);
});
