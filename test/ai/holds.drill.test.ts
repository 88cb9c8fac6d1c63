import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from '../../scripts/servers.mjs';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { buildChild, type Message, spawnChild } from '../redis/processes.js';
import { type FakeProvider, startFakeProvider } from './fake-provider.js';

// 3 processes sharing one redis-server's hold store, 30 concurrent streamed calls each, against a
// balance that covers about half of them: never more debited than the balance, every debit approved.
let child: { file: string; remove(): void };
let redis: RedisServer;
let mock: MockServer;
let provider: FakeProvider;
beforeAll(async () => {
  // Each store command may wait up to 10 s (the children start together on a busy machine).
  child = await buildChild('../ai/holds-child.ts');
  redis = await startRedisServer();
  mock = await startMockServer();
  provider = await startFakeProvider();
}, 60_000);
afterAll(async () => {
  child?.remove();
  await mock?.close();
  await provider?.close();
  await redis?.stop();
});

describe("'hold' across processes on redisHoldStore", () => {
  it('never debits more than the balance; every debit is approved', async () => {
    const acct = 'acct_ai_holds';
    await mock.lifecycle.subscribe({ account_ref_id: acct });
    const balance = 45 * 18; // each call costs 18 and holds 20: about half of the 90 fit at once
    mock.store.setBalance(acct, 'ai-assistant', 'credits', balance);
    provider.slow(10); // the streams overlap
    const env = {
      REDIS_URL: redis.url,
      API_KEY: mock.apiKey,
      BASE_URL: mock.baseUrl,
      PROVIDER: provider.origin,
      ACCT: acct,
      CALLS: '30',
    };
    const children = [0, 1, 2].map(() => spawnChild(child.file, env));
    const results = (await Promise.all(
      children.map((c) => c.next((m) => m.type === 'result', 120_000)),
    )) as (Message & {
      ok: number;
      refused: number;
      errors: string[];
    })[];
    const ok = results.reduce((s, r) => s + r.ok, 0);
    const refused = results.reduce((s, r) => s + r.refused, 0);
    expect(results.flatMap((r) => r.errors)).toEqual([]);
    expect(ok + refused).toBe(90);
    expect(ok).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    const debits = [...mock.store.ledger.values()].filter((d) => d.account_ref_id === acct);
    const debited = debits.reduce((s, d) => s + d.quantity, 0);
    expect(debits).toHaveLength(ok);
    expect(debited).toBe(ok * 18);
    expect(debited).toBeLessThanOrEqual(balance);
    expect(mock.store.balance(acct, 'ai-assistant', 'credits')).toBe(balance - debited);
  }, 180_000);
});
