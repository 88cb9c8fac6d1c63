import { redisDedupeStore } from '../../src/redis/index.js';
import { idempotencyCases } from '../gate/idempotency-cases.js';
import { replayCases } from '../gate/replay-cases.js';
import { useMockServer } from '../helpers.js';
import { uniquePrefix, useRedisClient } from './connect.js';
import { useRedisServer } from './redis-server.js';

// Two gate instances, each with a store of its own on one Redis (two clients, as two processes
// have): a key used, in flight or failed on one is seen so by the other.
const mock = useMockServer();
const redis = useRedisServer();
const one = useRedisClient(redis);
const two = useRedisClient(redis);

idempotencyCases('two instances sharing Redis', mock, async () => {
  const prefix = uniquePrefix('gate');
  const doneTtlMs = 24 * 60 * 60 * 1000;
  return [
    redisDedupeStore(one.client, { prefix, doneTtlMs }),
    redisDedupeStore(two.client, { prefix, doneTtlMs }),
  ];
});

replayCases(
  'two instances sharing Redis',
  mock,
  async () => {
    const prefix = uniquePrefix('replay');
    return [redisDedupeStore(one.client, { prefix }), redisDedupeStore(two.client, { prefix })];
  },
  'shared',
);
