import { afterAll, beforeAll } from 'vitest';
import { type AnyClient, type ClientKind, clientEnv, connectAny } from './clients.js';
import { type RedisCluster, startCluster } from './cluster.js';
import { type RedisServer, startRedisServer } from './redis-server.js';

/**
 * Where a multi-process test runs: one redis-server with node-redis's `createClient`, or the test
 * cluster (cluster.ts) with node-redis's `createCluster` or ioredis's `Cluster`. The children get
 * the client kind and the addresses through their environment (clients.ts, `connectFromEnv`).
 */
export interface Target {
  kind: ClientKind;
  /** What to add to a child's environment so it connects the same way. */
  env: Record<string, string>;
  /** The test's own client of this kind: its reads and writes (routed by the first key on a cluster). */
  command(args: string[]): Promise<unknown>;
  /** The test cluster, for the cluster kinds: its nodes, to act on one (make it busy, kill it). */
  cluster?: RedisCluster | undefined;
}

/** The kinds every multi-process test runs with: one node with node-redis, the cluster with both clients. */
export const KINDS = ['node-redis', 'node-redis-cluster', 'ioredis-cluster'] as const satisfies ClientKind[];

/**
 * Starts what `kinds` need for the file (a redis-server, a cluster, or both) before its first test
 * and a test client of each kind; stops them after its last. Returns the target of a kind, to read
 * inside a test.
 */
export function useTargets(kinds: readonly ClientKind[] = KINDS): (kind: ClientKind) => Target {
  const held = new Map<ClientKind, { target: Target; client: AnyClient }>();
  let server: RedisServer | undefined;
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    const single = kinds.some((k) => !k.endsWith('-cluster'));
    const clustered = kinds.some((k) => k.endsWith('-cluster'));
    [server, cluster] = await Promise.all([
      single ? startRedisServer() : undefined,
      clustered ? startCluster() : undefined,
    ]);
    for (const kind of kinds) {
      const nodes = kind.endsWith('-cluster')
        ? (cluster?.rootNodes ?? [])
        : [{ host: '127.0.0.1', port: server?.port ?? 0 }];
      const client = await connectAny(kind, nodes);
      const env =
        kind === 'node-redis'
          ? { ...clientEnv(kind, nodes), REDIS_URL: server?.url ?? '' }
          : clientEnv(kind, nodes);
      held.set(kind, {
        client,
        target: {
          kind,
          env,
          command: (args) => client.command(args),
          cluster: kind.endsWith('-cluster') ? cluster : undefined,
        },
      });
    }
  }, 90_000);
  afterAll(async () => {
    await Promise.all([...held.values()].map(({ client }) => client.close().catch(() => {})));
    await Promise.all([server?.stop(), cluster?.stop()]);
  });
  return (kind) => {
    const entry = held.get(kind);
    if (!entry) throw new Error(`no ${kind} target: not started (beforeAll failed?)`);
    return entry.target;
  };
}
