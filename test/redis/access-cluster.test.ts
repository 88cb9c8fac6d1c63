import { describe, expect, it } from 'vitest';
import { uniquePrefix } from './connect.js';
import {
  ask,
  type Child,
  expectOneColdRequest,
  invalidateAndTell,
  statusPath,
  useFleet,
} from './processes.js';
import { KINDS, type Target, useTargets } from './targets.js';

// The instances of access-processes.test.ts on a Redis Cluster, with node-redis's createCluster and
// with ioredis's Cluster (default options but the prefix): one request to the service for a key
// across 4 processes, and an invalidation on one seen by every other, whose next lookup asks anew.

const PROCESSES = 4;
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
    it(`${PROCESSES} × 250 concurrent cold lookups of one key: exactly 1 request reaches the service`, async () => {
      const children = await start(targets(kind));
      // The other processes wait on the one lookup's lease rather than find the answer already stored.
      await expectOneColdRequest(children, fleet.mock, `acct_cold_${kind}`);
    }, 60_000);

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
