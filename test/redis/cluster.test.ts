import { describe, expect, it } from 'vitest';
import { keySlot } from '../../src/redis/keys.js';
import { useCluster } from './cluster.js';

// The cluster the cluster tests run on: 3 masters, 3 replicas, every slot served, a key's slot as
// Redis computes it, and a killed master's replica promoted.

const ref = useCluster();

describe('the test cluster', () => {
  it('has 3 masters and 3 replicas, every node saying cluster_state:ok', async () => {
    const { cluster } = ref;
    expect(cluster.nodes.filter((n) => n.role === 'master')).toHaveLength(3);
    expect(cluster.nodes.filter((n) => n.role === 'replica')).toHaveLength(3);
    expect(cluster.rootNodes).toHaveLength(3);
    for (const node of cluster.nodes) {
      expect(node.pid).toBeGreaterThan(0);
      expect(await cluster.cli(node.port, 'CLUSTER', 'INFO')).toContain('cluster_state:ok');
    }
    for (const root of cluster.rootNodes) expect(await cluster.replicasOf(root.port)).toHaveLength(1);
  });

  it('keySlot agrees with CLUSTER KEYSLOT, hash tags included', async () => {
    const { cluster } = ref;
    // Not 'x{}{y}': cluster-key-slot (what node-redis and ioredis route by too) hashes it by the tag
    // '{y' where Redis hashes it whole; keyPrefix refuses an empty '{}' in a prefix, so the SDK's
    // prefixes and tags never make one.
    const keys = ['', 'a', 'billing-sdk:usage', '{acct_1}:a', 'x{acct_1}y', '{}x', '{{a}}', 'é€😀'];
    for (const key of keys) {
      const answer = await cluster.cli(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', key);
      expect(keySlot(key), key).toBe(Number(answer.trim()));
    }
    expect(keySlot('p:{acct_1}:a')).toBe(keySlot('q:{acct_1}:g'));
  });

  it('a master killed: its replica takes its slots, and the restarted node rejoins as a replica', async () => {
    const { cluster } = ref;
    const master = await cluster.masterOf('some-key');
    const [replica] = await cluster.replicasOf(master);
    await cluster.kill(master);
    await cluster.waitHealthy(20_000);
    expect(await cluster.masterOf('some-key')).toBe(replica);
    await cluster.restart(master);
    await cluster.waitHealthy(20_000);
    await expect.poll(() => cluster.replicasOf(replica!), { timeout: 10_000 }).toContain(master);
  }, 60_000);
});
