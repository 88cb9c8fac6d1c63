import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { uniquePrefix } from './connect.js';
import { buildChild, type Child, type Message, spawnChild } from './processes.js';
import { KINDS, type Target, useTargets } from './targets.js';

// The instances of access-processes.test.ts on a Redis Cluster, with node-redis's createCluster and
// with ioredis's Cluster (default options but the prefix): one request to the service for a key
// across 4 processes, and an invalidation on one seen by every other, whose next lookup asks anew.

const PROCESSES = 4;
const WARM_ACCOUNT = 'acct_warm';
const CLUSTER_KINDS = KINDS.filter((kind) => kind.endsWith('-cluster'));
const targets = useTargets(CLUSTER_KINDS);
let child: { file: string; remove(): void };
let mock: MockServer;
let running: Child[] = [];

beforeAll(async () => {
  child = await buildChild('./access-process.ts');
  mock = await startMockServer();
}, 60_000);
afterEach(async () => {
  await Promise.all(running.map((c) => c.kill()));
  running = [];
});
afterAll(async () => {
  child?.remove();
  await mock?.close();
});

/** Starts the instances; resolves once each is connected and warmed up. */
async function start(target: Target): Promise<Child[]> {
  const prefix = uniquePrefix('access-cluster');
  const children = Array.from({ length: PROCESSES }, () =>
    spawnChild(child.file, {
      ...target.env,
      PREFIX: prefix,
      BASE_URL: mock.baseUrl,
      API_KEY: mock.apiKey,
      TTL_MS: '60000',
      REDIS_TIMEOUT_MS: '1000',
      WARM_ACCOUNT,
    }),
  );
  running.push(...children);
  await Promise.all(children.map((c) => c.next((m) => m.type === 'ready', 20_000)));
  return children;
}

let ids = 0;
/** Sends a command and resolves with the child's answer to it. */
async function ask(
  c: Child,
  command: Record<string, unknown>,
  answer: string,
  ms = 15_000,
): Promise<Message> {
  const id = ++ids;
  c.send(JSON.stringify({ ...command, id }));
  return c.next((m) => m.type === answer && m.id === id, ms);
}

const statusPath = (account: string) => `/api/account/${account}/status/`;

describe.each(CLUSTER_KINDS)(
  `${PROCESSES} processes sharing redisAccessStore on a Redis Cluster, %s`,
  (kind) => {
    it(`${PROCESSES} × 250 concurrent cold lookups of one key: exactly 1 request reaches the service`, async () => {
      const children = await start(targets(kind));
      const account = `acct_cold_${kind}`;
      await mock.lifecycle.subscribe({ account_ref_id: account });
      mock.requests.clear();
      // The answer takes 300 ms: the other processes wait on the lease rather than find it stored.
      mock.faults.add({ path: statusPath(account), delayMs: 300 });
      const looked = await Promise.all(
        children.map((c) => ask(c, { cmd: 'lookup', account, n: 250 }, 'looked')),
      );
      for (const l of looked) expect(l).toMatchObject({ values: [true], errors: [] });
      expect(mock.requests.count({ path: statusPath(account) })).toBe(1);
      expect(mock.requests.count()).toBe(1);
    }, 60_000);

    it('invalidate on one process, 10 rounds: every other is told and its next lookup asks anew', async () => {
      const children = await start(targets(kind));
      const account = `acct_flips_${kind}`;
      await mock.lifecycle.subscribe({ account_ref_id: account });
      let active = true;
      for (let round = 0; round < 10; round++) {
        for (const c of children) {
          expect(await ask(c, { cmd: 'lookup', account, n: 1 }, 'looked')).toMatchObject({
            values: [active],
          });
        }
        if (active) await mock.lifecycle.cancel({ account_ref_id: account });
        else await mock.lifecycle.paymentSucceeded({ account_ref_id: account });
        active = !active;
        const invalidator = children[round % PROCESSES]!;
        const others = children.filter((c) => c !== invalidator);
        const marks = others.map((c) => c.messages.length);
        await ask(invalidator, { cmd: 'invalidate', account }, 'invalidated');
        await Promise.all(
          others.map((c, i) =>
            c.next(
              (m) => m.type === 'told' && m.account === account && c.messages.indexOf(m) >= marks[i]!,
              5_000,
            ),
          ),
        );
        mock.requests.clear();
        for (const c of children) {
          const next = await ask(c, { cmd: 'lookup', account, n: 1 }, 'looked');
          expect(next).toMatchObject({ values: [active], errors: [], misses: 1, hits: 0 });
        }
        // Through the shared store, the fleet's new answer still cost one request.
        expect(mock.requests.count({ path: statusPath(account) })).toBe(1);
      }
    }, 60_000);
  },
);
