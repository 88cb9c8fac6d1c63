import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, seededRandom, startMockServer } from '../../src/testing/index.js';
import { clientFor, instantClock, until } from '../helpers.js';

// A bounded soak: 1000 writes (500 debits, 500 usage events) through every fault a write can meet,
// drawn from a seeded generator so a failure replays. Retries wait on an injected clock (no real
// backoff), so the whole run takes a few seconds of real HTTP.
let server: MockServer;
beforeAll(async () => {
  server = await startMockServer({ random: seededRandom(20261123) });
});
afterAll(() => server.close());

const WRITES = 500;
const credits = { account_ref_id: 'acct_active', product_code: 'ai-assistant', meter_code: 'credits' };
const calls = { account_ref_id: 'acct_active', product_code: 'api-gateway', meter_code: 'api_calls' };

/** Runs `task(i)` for i in [0, n) with at most `limit` in flight. */
async function pool<T>(n: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

describe('fault soak: 1000 writes under lost responses, 429, 503, resets and stalled bodies', () => {
  it('applies every write exactly once, loses none, and holds no socket afterwards', async () => {
    const clean = clientFor(server);
    const balanceBefore = (await clean.usage.balance(credits)).balance;
    const usageBefore = (await clean.usage.summary(calls)).total_usage;
    for (const path of ['/api/usage/credits/debit/', '/api/usage/events/']) {
      const common = { method: 'POST', path, times: Number.POSITIVE_INFINITY };
      server.faults.add({ ...common, probability: 0.08, reset: 'after' }); // committed, answer lost
      server.faults.add({ ...common, probability: 0.05, reset: 'before' });
      server.faults.add({ ...common, probability: 0.05, status: 429, headers: { 'retry-after': '0' } });
      server.faults.add({ ...common, probability: 0.05, status: 503 });
      server.faults.add({ ...common, probability: 0.03, stall: 'body' }); // committed, body never ends
    }
    const clock = instantClock();
    // 1 s per attempt: a stalled body costs that much real time, and a loaded CI machine can take a
    // few hundred ms to answer a healthy request (250 ms timed out 11 attempts in a row there).
    const billing = clientFor(server, { maxRetries: 10, timeout: 1_000 }, clock);

    const debits = await pool(WRITES, 16, () => billing.usage.debit({ ...credits, quantity: 1 }));
    const events = await pool(WRITES, 16, () => billing.usage.record({ ...calls, quantity: 1 }));

    // Nothing lost: every call resolved with an applied result.
    expect(debits.every((d) => d.approved)).toBe(true);
    expect(events.every((e) => e.accepted)).toBe(true);
    // Nothing doubled: the balance and the usage total moved by exactly one per call.
    expect((await clean.usage.balance(credits)).balance).toBe(balanceBefore - WRITES);
    expect((await clean.usage.summary(calls)).total_usage).toBe(usageBefore + WRITES);
    expect(new Set([...debits, ...events].map((r) => r.event_key)).size).toBe(2 * WRITES);
    // The faults did fire, and were retried through.
    const sent = server.requests.count();
    expect(sent).toBeGreaterThan(2 * WRITES * 1.15);
    expect(clock.waits.length).toBeGreaterThan(100);
    // No socket held: every stalled body was torn down by the client (an abandoned one stays active
    // on the server until its socket closes). Idle keep-alive sockets are the pool's, not held.
    await until(() => server.activeRequests() === 0, 2_000);
  }, 60_000);
});
