import { afterAll, beforeAll } from 'vitest';
import { redisSpool } from '../../src/redis/index.js';
import { spoolContract } from '../tracker/spool-contract.js';
import { type AnyClient, connectAny } from './clients.js';
import { useCluster } from './cluster.js';

// The spool contract, its tracker cases included (a retryable refusal backing off alone to a dead
// letter, an append whose answer is lost), on a Redis Cluster of 3 masters and 3 replicas through
// ioredis's Cluster as it is passed: the stream, its group and its dead letters are keys of one
// slot, so no step is CROSSSLOT and a MOVED is never the caller's. Each place is its own stream
// (and slot), spread over the masters. A process test (vitest.config.ts): the cluster is six servers.
const ref = useCluster();
let connected: AnyClient;
beforeAll(async () => {
  connected = await connectAny('ioredis-cluster', ref.cluster.rootNodes);
}, 30_000);
afterAll(async () => {
  await connected?.close();
});

const prefix = `spool-cluster-${process.pid}-`;
spoolContract('redisSpool on a Redis Cluster (ioredis)', (place) =>
  redisSpool(connected.client as Parameters<typeof redisSpool>[0], {
    stream: `${prefix}${place}`,
    consumer: place,
  }),
);
