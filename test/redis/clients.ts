import { createClient, createCluster } from 'redis';

// The Redis clients the tests run each part of billing-sdk/redis with, as applications make them:
// node-redis's createClient (one node) and createCluster, ioredis's Redis (one node) and Cluster.
// No vitest here: the child processes (test/redis/*-process.ts) connect through it too.

/** Which client: the two single-node ones, and the two cluster ones. */
export type ClientKind = 'node-redis' | 'node-redis-cluster' | 'ioredis' | 'ioredis-cluster';

/** A Redis node's address. */
export interface Address {
  host: string;
  port: number;
}

/** A connected client of some kind, passed to the SDK as it is, and how to close it. */
export interface AnyClient {
  kind: ClientKind;
  /** The client itself, as an application passes it to `redisSpool` and the stores. */
  client: unknown;
  /** Sends one command, e.g. `['GET', key]` (routed by its first key on a cluster): a test's own reads and writes. */
  command(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Connects a client of `kind` to `nodes` (one node's address for the single-node kinds, the
 * cluster's masters for the cluster kinds). Its 'error' events are swallowed: a lost connection
 * emits one, and an unhandled 'error' event would end the process.
 */
export async function connectAny(kind: ClientKind, nodes: readonly Address[]): Promise<AnyClient> {
  const first = nodes[0];
  if (!first) throw new Error('connectAny: no node address');
  if (kind === 'node-redis') {
    const client = createClient({ url: `redis://${first.host}:${first.port}` });
    client.on('error', () => {});
    await client.connect();
    return { kind, client, command: (args) => client.sendCommand(args), close: () => client.close() };
  }
  if (kind === 'node-redis-cluster') {
    const client = createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
    client.on('error', () => {});
    await client.connect();
    // The first key picks the node: in every test command it follows the command's name.
    return {
      kind,
      client,
      command: (args) => client.sendCommand(args[1], false, args),
      close: () => client.close(),
    };
  }
  const { Cluster, Redis } = await import('ioredis');
  const client =
    kind === 'ioredis'
      ? new Redis({ host: first.host, port: first.port, lazyConnect: true })
      : new Cluster(
          nodes.map((n) => ({ host: n.host, port: n.port })),
          { lazyConnect: true },
        );
  client.on('error', () => {});
  await client.connect();
  return {
    kind,
    client,
    command: (args) => client.call(args[0]!, ...args.slice(1)),
    close: async () => {
      await client.quit();
    },
  };
}

/** The environment that tells a child process which client to connect, to where (read by {@link connectFromEnv}). */
export function clientEnv(kind: ClientKind, nodes: readonly Address[]): Record<string, string> {
  return { REDIS_CLIENT: kind, REDIS_NODES: nodes.map((n) => `${n.host}:${n.port}`).join(',') };
}

/**
 * In a child process: the client its test asked for, `REDIS_CLIENT` (default `node-redis`) to
 * `REDIS_NODES` (`host:port,…`) or `REDIS_URL`.
 */
export function connectFromEnv(): Promise<AnyClient> {
  const kind = (process.env.REDIS_CLIENT ?? 'node-redis') as ClientKind;
  const nodes = process.env.REDIS_NODES
    ? process.env.REDIS_NODES.split(',').map((n) => {
        const [host = '', port = ''] = n.split(':');
        return { host, port: Number(port) };
      })
    : (() => {
        const url = new URL(process.env.REDIS_URL ?? '');
        return [{ host: url.hostname, port: Number(url.port) }];
      })();
  return connectAny(kind, nodes);
}
