import { afterAll, describe, expect, it } from 'vitest';
import { type RestartableRedis, startRestartableRedis } from './access-redis.js';
import { uniquePrefix } from './connect.js';
import {
  ask,
  type Child,
  expectOneColdRequest,
  invalidateAndTell,
  statusPath,
  useFleet,
} from './processes.js';
import { useRedisServer } from './redis-server.js';

// Instances of one service in separate processes, each with its own createAccessCache on
// redisAccessStore, asking the SDK's mock over HTTP on loopback (no stubs): one request to the
// service for a key across all of them, an invalidation on one reaching the others, and lookups
// going on from the service when Redis dies.

const PROCESSES = 4;
const WARM_ACCOUNT = 'acct_warm';
const redis = useRedisServer();
const fleet = useFleet('./access-process.ts');

/** Starts the instances; resolves once each is connected and warmed up. */
function start(options: { redisUrl: string; ttlMs: number; redisTimeoutMs?: number }): Promise<Child[]> {
  return fleet.start(PROCESSES, {
    REDIS_URL: options.redisUrl,
    PREFIX: uniquePrefix('access-processes'),
    TTL_MS: String(options.ttlMs),
    REDIS_TIMEOUT_MS: String(options.redisTimeoutMs ?? 500),
    WARM_ACCOUNT,
  });
}

describe(`${PROCESSES} processes sharing redisAccessStore`, () => {
  it(`${PROCESSES} × 250 concurrent cold lookups of one key: exactly 1 request reaches the service`, async () => {
    const children = await start({ redisUrl: redis.server.url, ttlMs: 60_000 });
    // The other processes wait on the one lookup's lease rather than find the answer already stored.
    await expectOneColdRequest(children, fleet.mock, 'acct_cold');
  });

  it('invalidate on one process: every other drops its answer and its next lookup asks anew', async () => {
    const children = await start({ redisUrl: redis.server.url, ttlMs: 60_000 });
    const account = 'acct_flips';
    await fleet.mock.lifecycle.subscribe({ account_ref_id: account });
    let active = true;
    for (let round = 0; round < 50; round++) {
      // Every process holds the answer in memory.
      for (const c of children) {
        expect(await ask(c, { cmd: 'lookup', account, n: 1 }, 'looked')).toMatchObject({ values: [active] });
      }
      // The account changes at the service; without an invalidation each process keeps its answer.
      if (active) await fleet.mock.lifecycle.cancel({ account_ref_id: account });
      else await fleet.mock.lifecycle.paymentSucceeded({ account_ref_id: account });
      const stale = await ask(children[round % PROCESSES]!, { cmd: 'lookup', account, n: 1 }, 'looked');
      expect(stale).toMatchObject({ values: [active], hits: 1 });
      active = !active;

      const invalidator = children[round % PROCESSES]!;
      const others = children.filter((c) => c !== invalidator);
      // Each other process told within invalidateAndTell's 5 s (how soon: the bench's to measure).
      await invalidateAndTell(invalidator, others, account);
      fleet.mock.requests.clear();
      for (const c of children) {
        const next = await ask(c, { cmd: 'lookup', account, n: 1 }, 'looked');
        // Asked anew (a miss, not an answer from memory), and got the new state.
        expect(next).toMatchObject({ values: [active], errors: [], misses: 1, hits: 0 });
      }
      // Through the shared store, the fleet's new answer still cost one request.
      expect(fleet.mock.requests.count({ path: statusPath(account) })).toBe(1);
    }
  });
});

describe('Redis SIGKILLed while the processes look up', () => {
  let server: RestartableRedis | undefined;
  afterAll(() => server?.dispose());

  it('every lookup still answers, from the service; each process’s onError is told', async () => {
    server = await startRestartableRedis(false);
    const children = await start({ redisUrl: server.url, ttlMs: 100, redisTimeoutMs: 200 });
    const accounts = ['acct_active', 'acct_unknown_1', 'acct_active', 'acct_unknown_2'];
    fleet.mock.requests.clear();
    const runs = children.map((c) =>
      ask(c, { cmd: 'run', accounts, ms: 3_000, concurrency: 10 }, 'ran', 30_000),
    );
    // Let them run with Redis first, then kill it under them.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const statusRequests = () => fleet.mock.requests.count({ path: /\/status\/$/ });
    const beforeKill = statusRequests();
    await server.kill('SIGKILL');
    const ran = await Promise.all(runs);
    const requestsAfterKill = statusRequests() - beforeKill;
    for (const r of ran) {
      expect(r).toMatchObject({ failed: 0, failures: [] });
      expect(r.answers).toEqual({ acct_active: [true], acct_unknown_1: [false], acct_unknown_2: [false] });
      expect(r.onErrors as number).toBeGreaterThan(0);
      expect(String(r.firstError)).toMatch(/^StoreError: redisAccessStore\.\w+: Redis failed/);
    }
    // Without Redis, answers came from the service (each process on its own once its ttl ran out).
    expect(requestsAfterKill).toBeGreaterThan(0);
  });
});
