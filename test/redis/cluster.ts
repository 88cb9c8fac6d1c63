import { afterAll, beforeAll } from 'vitest';
import { type RedisCluster, startCluster } from '../../scripts/servers.mjs';

// The starter itself is scripts/servers.mjs (plain JS, shared with the bench); this file adds vitest's hooks.
export {
  type ClusterNode,
  NODE_TIMEOUT_MS,
  type RedisCluster,
  startCluster,
} from '../../scripts/servers.mjs';

/** One cluster for the file: started before the first test, stopped after the last. */
export function useCluster(): { readonly cluster: RedisCluster } {
  const ref = {} as { cluster: RedisCluster };
  beforeAll(async () => {
    ref.cluster = await startCluster();
  }, 90_000);
  afterAll(() => ref.cluster?.stop());
  return ref;
}
