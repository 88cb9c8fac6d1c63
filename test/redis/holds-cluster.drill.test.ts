import { holdFleetTests } from './holds-fleet.js';

// redisHoldStore shared by processes on a Redis Cluster, with node-redis's createCluster and with
// ioredis's Cluster (holds-fleet.ts). A drill: the cluster's start and the two kinds' SIGKILL waits
// take about 20 s, more than the normal suite gives a file; holds-processes.test.ts runs the same
// tests on one redis-server there.
holdFleetTests(['node-redis-cluster', 'ioredis-cluster']);
