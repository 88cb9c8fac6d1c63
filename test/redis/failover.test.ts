import { randomUUID } from 'node:crypto';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpoolError, StoreError } from '../../src/core/errors/index.js';
import { redisDedupeStore, redisSpool } from '../../src/redis/index.js';
import { type MockServer, startMockServer } from '../../src/testing/index.js';
import { caught } from '../helpers.js';
import { spooledEvent } from '../tracker/spool-contract.js';
import { useCluster } from './cluster.js';
import { type FailoverResult, failoverRun, ioredisCluster } from './failover-run.js';

// A master of the test cluster SIGKILLed under three usage trackers, its replica lagging: with
// `waitReplicas: 1`, every event whose `track` resolved is recorded exactly once, and tracking goes
// on once the cluster is whole; without it, resolved events are lost (what the option prevents).
// The clients are ioredis's Cluster (node-redis's cluster client does not follow the failover: the
// last test here, and the guide). How many are lost, how soon tracking resumes: the bench's to count.

const RUNS = 3;
const ref = useCluster();
let mock: MockServer;
beforeAll(async () => {
  mock = await startMockServer();
});
afterAll(() => mock?.close());

const summary = (r: FailoverResult) =>
  `${r.resolved} resolved, ${r.lost.length} of them lost (${r.leftInStream} left in the stream), ${r.duplicates.length} recorded twice; rejected ${JSON.stringify(r.rejected)} (${r.rejectedButRecorded} of those recorded); ${r.resolvedWhileDegraded} resolved between the kill and the restart, ${r.resolvedOnceWhole} after; first resolved ${r.firstResolvedAfterKillMs} ms after the kill`;

describe('a master failing over under 3 trackers on one redisSpool stream (ioredis Cluster)', () => {
  it('with waitReplicas: 1, every event whose track resolved is recorded exactly once', async () => {
    for (let i = 1; i <= RUNS; i++) {
      const result = await failoverRun(ref.cluster, mock, 1);
      const run = `run ${i}: ${summary(result)}`;
      expect(result.lost, run).toEqual([]);
      expect(result.leftInStream, run).toBe(0); // everything sent, nothing stuck
      expect(result.duplicates, run).toEqual([]);
      // The new master has no replica until the killed node is back: nothing can be confirmed.
      expect(result.resolvedWhileDegraded, run).toBe(0);
      expect(result.rejected.not_replicated, run).toBeGreaterThan(0);
      expect(result.resolvedOnceWhole, run).toBeGreaterThanOrEqual(200);
    }
  }, 400_000);

  it('without it, events whose track resolved are lost (what waitReplicas prevents), none recorded twice', async () => {
    const runs: string[] = [];
    let lost = 0;
    for (let i = 1; i <= RUNS; i++) {
      const result = await failoverRun(ref.cluster, mock, 0);
      runs.push(`run ${i}: ${summary(result)}`);
      lost += result.lost.length;
      expect(result.duplicates, runs.at(-1)).toEqual([]);
      expect(result.resolvedOnceWhole, runs.at(-1)).toBeGreaterThanOrEqual(200);
    }
    // Lost in every one of 15 runs measured (guides/several-instances.md): over 3, some are.
    expect(lost, runs.join('\n')).toBeGreaterThan(0);
  }, 400_000);
});

describe('waitReplicas on the cluster, with each client (WAIT routed to the master of the key)', () => {
  it.each(['ioredis', 'node-redis'] as const)(
    '%s: resolves with the replica live, rejects typed with it frozen',
    async (name) => {
      const { cluster } = ref;
      const run = randomUUID().slice(0, 8);
      const client =
        name === 'ioredis'
          ? ioredisCluster(cluster)
          : createCluster({
              rootNodes: cluster.rootNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
            });
      if (name === 'node-redis') {
        const nodeRedis = client as ReturnType<typeof createCluster>;
        nodeRedis.on('error', () => {});
        await nodeRedis.connect();
      }
      const stream = `wait:${run}`;
      const spool = redisSpool(client, { stream, waitReplicas: 1, waitTimeoutMs: 300 });
      const prefix = `done:${run}:`;
      const store = redisDedupeStore(client, { prefix, waitReplicas: 1, waitTimeoutMs: 300 });
      try {
        await spool.open();
        expect(await spool.append([spooledEvent(0)])).toHaveLength(1);
        expect(await store.complete('evt', 'token')).toBe(false);
        // Frozen: the replica of the master that holds the stream (and, in turn, the id's key).
        for (const [key, step] of [
          [stream, () => spool.append([spooledEvent(1)])],
          [`${prefix}evt`, () => store.complete('evt', 'token')],
        ] as const) {
          const [replica] = await cluster.replicasOf(await cluster.masterOf(key));
          const pid = Number(/process_id:(\d+)/.exec(await cluster.cli(replica!, 'INFO', 'server'))?.[1]);
          process.kill(pid, 'SIGSTOP');
          let error: Error;
          try {
            error = await caught(step);
          } finally {
            process.kill(pid, 'SIGCONT');
          }
          expect(error).toBeInstanceOf(key === stream ? SpoolError : StoreError);
          expect((error as SpoolError | StoreError).code).toBe('not_replicated');
        }
        await spool.close();
      } finally {
        if (name === 'ioredis') (client as ReturnType<typeof ioredisCluster>).disconnect();
        else (client as ReturnType<typeof createCluster>).destroy();
      }
    },
    30_000,
  );
});

describe('the clients after a failover (the spool on each, waitReplicas 0)', () => {
  it('ioredis Cluster appends to the promoted replica; node-redis createCluster does not within 20 s (the guide says so)', async () => {
    const { cluster } = ref;
    const stream = `follow:${randomUUID().slice(0, 8)}`;
    const master = await cluster.masterOf(stream);
    const io = ioredisCluster(cluster);
    const nodeRedis = createCluster({
      rootNodes: cluster.rootNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
    });
    nodeRedis.on('error', () => {});
    await nodeRedis.connect();
    try {
      const spools = { ioredis: redisSpool(io, { stream }), 'node-redis': redisSpool(nodeRedis, { stream }) };
      for (const spool of Object.values(spools)) {
        await spool.open();
        expect(await spool.append([spooledEvent(0)])).toHaveLength(1);
      }
      await cluster.kill(master);
      const killed = performance.now();
      /** How long after the kill an append through `spool` first resolved; undefined if none within 20 s. */
      const lastError: Record<string, string> = {};
      const follows = async (name: keyof typeof spools): Promise<number | undefined> => {
        const spool = spools[name];
        while (performance.now() - killed < 20_000) {
          try {
            await spool.append([spooledEvent(1)]);
            return Math.round(performance.now() - killed);
          } catch (error) {
            lastError[name] = String(error).slice(0, 200);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        return undefined;
      };
      const [ioMs, nodeRedisMs] = await Promise.all([follows('ioredis'), follows('node-redis')]);
      const seen = `ioredis ${ioMs} ms, node-redis ${nodeRedisMs} ms; last errors ${JSON.stringify(lastError)}`;
      expect(ioMs, seen).toBeDefined();
      // node-redis 5.12.1 keeps sending the slots to the dead master (guides/several-instances.md,
      // "Clients"): when a release follows the failover, this fails, and the guide must change.
      expect(nodeRedisMs, seen).toBeUndefined();
      for (const spool of Object.values(spools)) await spool.close();
    } finally {
      io.disconnect();
      // Not close(): it waits for the dead node's connection, which node-redis keeps trying.
      nodeRedis.destroy();
      await cluster.restart(master).catch(() => {});
      await cluster.waitHealthy(30_000);
    }
  }, 90_000);
});
