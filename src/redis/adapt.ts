import { check, redisClient, required } from '../internal/checks.js';
import { keySlot } from './keys.js';

/**
 * The one method of a Redis client this entry needs when the client is none it knows: send a
 * command, get its reply. node-redis's `createClient()` (the `redis` package, v4 and v5) has it as
 * is; node-redis's `createCluster()` and ioredis's `Redis` and `Cluster` are recognised by their
 * own shapes and passed as they are too (see {@link RedisClient}). An adapter of another client
 * must send every command to one Redis on one connection (a WAIT follows its write there).
 *
 * Replies are read as RESP2 gives them through node-redis's default type mapping: integers as
 * numbers, bulk strings as strings (or Buffers), arrays as arrays, nil as null.
 */
export interface RedisLike {
  /** Sends one command, e.g. `['EVAL', script, '1', key, arg]`, and resolves with its reply. */
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * A node-redis cluster client (`createCluster()` from `redis`, v4 or v5), as this entry uses it:
 * its `sendCommand` takes the key that picks the node first. Typed by its shape: nothing here
 * imports `redis`.
 */
export interface NodeRedisClusterLike {
  /** Sends `args` to the master serving `firstKey`'s slot (`isReadonly` false), following MOVED/ASK. */
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>;
  /** The cluster's masters: node-redis's cluster client has them (the single-node client has not). */
  readonly masters: unknown;
}

/**
 * An ioredis client, `new Redis()` or `new Cluster([...])` (ioredis v5 or later), as this entry
 * uses it: `call` sends any command (a cluster routes it by its keys, following MOVED/ASK), and
 * `isCluster` says which of the two it is. Typed by its shape: nothing here imports `ioredis`.
 */
export interface IoRedisLike {
  /** Sends one command, e.g. `call('EVAL', script, '1', key)`, and resolves with its reply. */
  call(command: string, ...args: string[]): Promise<unknown>;
  /** `true` for ioredis's `Cluster`, `false` for its `Redis`. */
  readonly isCluster: boolean;
}

/**
 * Any Redis client `billing-sdk/redis` accepts, passed as it is: a node-redis client
 * (`createClient()` or `createCluster()`), an ioredis client (`new Redis()` or `new Cluster()`),
 * or any object with `sendCommand(args)` (the {@link RedisLike} adapter of another client, which
 * must send every command of one store on one connection to one Redis).
 */
export type RedisClient = RedisLike | NodeRedisClusterLike | IoRedisLike;

/** Which of the clients {@link adaptClient} recognised. */
export type ClientKind = 'node-redis' | 'node-redis-cluster' | 'ioredis' | 'ioredis-cluster';

/**
 * How the stores send commands, whatever the client: the one place that knows the four clients.
 * `key` routes the command on a cluster (to the master serving its slot, where the step's keys
 * are); on one node there is one connection anyway. A keyless command sent with the key of a
 * write just made (WAIT) reaches the connection that made it.
 */
export interface CommandRunner {
  /** Which client it runs on. */
  readonly kind: ClientKind;
  /** Sends one command; resolves with its reply, rejects with the client's error (a sync throw included). */
  send(args: string[], key: string): Promise<unknown>;
}

/** A property of a client that may be anything (a proxy, a getter that throws): `undefined` then. */
function read(client: unknown, name: string): unknown {
  try {
    return (client as Record<string, unknown> | null)?.[name];
  } catch {
    return undefined;
  }
}

/** A master's connection in an ioredis `Cluster` (`nodes('master')`), as this entry reads it. */
interface IoRedisNode {
  options?: { host?: string; port?: number };
  call(command: string, ...args: string[]): Promise<unknown>;
}

/**
 * ioredis's `Cluster` routes a command by its keys, so a keyless one (WAIT) would go to any node:
 * this finds the connection of the master serving `key`'s slot (`slots[slot][0]` is its
 * `host:port`, `nodes('master')` the connections, which its routed commands use too), or
 * `undefined` before the cluster knows its slots.
 */
function ioredisNodeOf(cluster: unknown, key: string): IoRedisNode | undefined {
  const slots = read(cluster, 'slots');
  const nodes = read(cluster, 'nodes');
  if (!Array.isArray(slots) || typeof nodes !== 'function') return undefined;
  const owner: unknown = slots[keySlot(key)]?.[0];
  const masters: unknown = nodes.call(cluster, 'master');
  if (typeof owner !== 'string' || !Array.isArray(masters)) return undefined;
  return (masters as IoRedisNode[]).find((node) => `${node.options?.host}:${node.options?.port}` === owner);
}

/**
 * Which client `client` is, by its shape alone (no package is imported): ioredis has `call` and a
 * boolean `isCluster` (its `sendCommand` takes ioredis's own `Command`, so it is looked at first);
 * node-redis's cluster client has `sendCommand` and `masters`; anything else with `sendCommand` is
 * taken as node-redis's `createClient()` or a {@link RedisLike} adapter.
 */
export function clientKind(client: unknown): ClientKind | undefined {
  const call = read(client, 'call');
  const isCluster = read(client, 'isCluster');
  if (typeof call === 'function' && typeof isCluster === 'boolean')
    return isCluster ? 'ioredis-cluster' : 'ioredis';
  if (typeof read(client, 'sendCommand') !== 'function') return undefined;
  return read(client, 'masters') !== undefined ? 'node-redis-cluster' : 'node-redis';
}

/**
 * The {@link CommandRunner} of a client passed to a store (`operation` names the store in the
 * error). Throws {@link billing-sdk!InvalidRequestError} naming `client` when it is none of the
 * clients {@link RedisClient} lists.
 */
export function adaptClient(operation: string, client: unknown): CommandRunner {
  check(operation, { client }, { client: [required, redisClient] });
  const kind = clientKind(client);
  // A sync throw (a client used after quit, say) becomes a rejection like any other failure.
  const settle = (send: () => unknown) => Promise.resolve().then(send);
  switch (kind) {
    case 'ioredis':
      return { kind, send: (args) => settle(() => (client as IoRedisLike).call(args[0]!, ...args.slice(1))) };
    case 'ioredis-cluster':
      return {
        kind,
        send: (args, key) =>
          settle(() => {
            const [name = '', ...rest] = args;
            // EVAL names its keys: the cluster routes it. A keyless command goes where `key` is.
            if (name === 'EVAL') return (client as IoRedisLike).call(name, ...rest);
            const node = ioredisNodeOf(client, key);
            if (!node)
              throw new Error(`ioredis Cluster: no connection to the master of slot ${keySlot(key)} yet`);
            return node.call(name, ...rest);
          }),
      };
    case 'node-redis-cluster':
      return {
        kind,
        send: (args, key) => settle(() => (client as NodeRedisClusterLike).sendCommand(key, false, args)),
      };
    default:
      return { kind: 'node-redis', send: (args) => settle(() => (client as RedisLike).sendCommand(args)) };
  }
}
