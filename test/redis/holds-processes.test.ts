import { holdFleetTests } from './holds-fleet.js';

// redisHoldStore shared by processes on one redis-server with node-redis (holds-fleet.ts); the same
// tests on a Redis Cluster are the drill holds-cluster.drill.test.ts.
holdFleetTests(['node-redis']);
