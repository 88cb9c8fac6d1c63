import { describe, expect, it } from 'vitest';
import { uniquePrefix } from './connect.js';
import { ask, type Child, invalidateAndTell, statusPath, useFleet, waitUntil } from './processes.js';
import { KINDS, type Target, useTargets } from './targets.js';

// The instances of access-processes.test.ts on a Redis Cluster, with node-redis's createCluster and
// with ioredis's Cluster (default options but the prefix): one request to the service for a key
// across 4 processes, also while the key's master refuses commands for a moment, and an
// invalidation on one seen by every other, whose next lookup asks anew.

const PROCESSES = 4;
const ROUNDS = 8;
/**
 * Holds the node it runs on for ARGV[1] ms: meanwhile (past `busy-reply-threshold`) it refuses
 * every other command with BUSY, as a node loading or a cluster settling refuses with LOADING,
 * TRYAGAIN or CLUSTERDOWN, without a failover (the harness's node timeout is 1 s).
 */
const BUSY_LOOP = `local t = redis.call('TIME')
local start = t[1] * 1000 + t[2] / 1000
repeat t = redis.call('TIME') until t[1] * 1000 + t[2] / 1000 - start >= tonumber(ARGV[1])
return 1`;
const WARM_ACCOUNT = 'acct_warm';
const CLUSTER_KINDS = KINDS.filter((kind) => kind.endsWith('-cluster'));
const targets = useTargets(CLUSTER_KINDS);
const fleet = useFleet('./access-process.ts', 60_000);

/** Starts the instances; resolves once each is connected and warmed up. */
function start(target: Target): Promise<Child[]> {
  return fleet.start(PROCESSES, {
    ...target.env,
    PREFIX: uniquePrefix('access-cluster'),
    TTL_MS: '60000',
    REDIS_TIMEOUT_MS: '1000',
    WARM_ACCOUNT,
  });
}

describe.each(CLUSTER_KINDS)(
  `${PROCESSES} processes sharing redisAccessStore on a Redis Cluster, %s`,
  (kind) => {
    it(`${ROUNDS} rounds of ${PROCESSES} × 250 concurrent cold lookups of a fresh account, every other one while its master answers BUSY: 1 request to the service each, no store error`, async () => {
      const target = targets(kind);
      const cluster = target.cluster;
      if (!cluster) throw new Error(`no cluster for ${kind}`);
      const children = await start(target);
      for (let round = 0; round < ROUNDS; round++) {
        const account = `acct_cold_${kind}_${round}`;
        await fleet.mock.lifecycle.subscribe({ account_ref_id: account });
        fleet.mock.requests.clear();
        // The other processes' lookups arrive while the one request is out: they wait on its lease.
        fleet.mock.faults.add({ path: statusPath(account), delayMs: 300 });
        let busy: Promise<string> | undefined;
        if (round % 2 === 1) {
          const port = await cluster.masterOf(`{${account}}`);
          await cluster.cli(port, 'CONFIG', 'SET', 'busy-reply-threshold', '10');
          busy = cluster.cli(port, 'EVAL', BUSY_LOOP, '0', '300');
          await waitUntil('the master answers BUSY', async () =>
            (await cluster.cli(port, 'PING')).startsWith('BUSY'),
          );
        }
        const looked = await Promise.all(
          children.map((c) => ask(c, { cmd: 'lookup', account, n: 250 }, 'looked')),
        );
        await busy;
        // A store error would have sent its process to the service on its own: named here if any.
        for (const l of looked)
          expect(l, `round ${round}`).toMatchObject({ values: [true], errors: [], storeErrors: [] });
        expect(fleet.mock.requests.count({ path: statusPath(account) }), `round ${round}`).toBe(1);
        expect(fleet.mock.requests.count(), `round ${round}`).toBe(1);
      }
    }, 90_000);

    it('invalidate on one process, 10 rounds: every other is told and its next lookup asks anew', async () => {
      const children = await start(targets(kind));
      const account = `acct_flips_${kind}`;
      await fleet.mock.lifecycle.subscribe({ account_ref_id: account });
      let active = true;
      for (let round = 0; round < 10; round++) {
        for (const c of children) {
          expect(await ask(c, { cmd: 'lookup', account, n: 1 }, 'looked')).toMatchObject({
            values: [active],
          });
        }
        if (active) await fleet.mock.lifecycle.cancel({ account_ref_id: account });
        else await fleet.mock.lifecycle.paymentSucceeded({ account_ref_id: account });
        active = !active;
        const invalidator = children[round % PROCESSES]!;
        const others = children.filter((c) => c !== invalidator);
        await invalidateAndTell(invalidator, others, account);
        fleet.mock.requests.clear();
        for (const c of children) {
          const next = await ask(c, { cmd: 'lookup', account, n: 1 }, 'looked');
          expect(next).toMatchObject({ values: [active], errors: [], misses: 1, hits: 0 });
        }
        // Through the shared store, the fleet's new answer still cost one request.
        expect(fleet.mock.requests.count({ path: statusPath(account) })).toBe(1);
      }
    }, 60_000);
  },
);
