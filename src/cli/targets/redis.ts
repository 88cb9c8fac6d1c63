import { adaptClient, type CommandRunner } from '../../redis/adapt.js';
import { redisSpool } from '../../redis/spool.js';
import { DEFAULT_STREAM, isDefaultStream, serviceStream } from '../../redis/spool-stream.js';
import type { SpoolFlags } from '../args.js';
import { CliFailure, messageOf } from '../fail.js';
import { redactUrl } from '../url-secrets.js';
import { missingDriver, optionalImport, within } from './load.js';
import type { Backlog, OtherSpool, SpoolTarget, TargetOptions } from './target.js';

type IoRedisModule = typeof import('ioredis');
type NodeRedisModule = typeof import('redis');

/** A connected client of either driver, and how to let it go. */
interface Connected {
  client: unknown;
  close(): Promise<void>;
  /**
   * Senders of a keyless command to each master of a cluster (SCAN reads one node's keys);
   * `undefined` when the client does not expose them (node-redis's cluster).
   */
  masters?: (() => ((args: string[]) => Promise<unknown>)[]) | undefined;
}

/** The ioredis client (or cluster) of the URL, connected, or the error that kept it from it. */
async function ioredis(module: IoRedisModule, url: string, cluster: boolean): Promise<Connected> {
  const { Redis, Cluster } = module;
  let client: InstanceType<typeof Redis> | InstanceType<typeof Cluster>;
  if (cluster) {
    const u = new URL(url);
    client = new Cluster([{ host: u.hostname, port: Number(u.port || 6379) }], {
      lazyConnect: true,
      redisOptions: {
        username: decodeURIComponent(u.username) || undefined,
        password: decodeURIComponent(u.password) || undefined,
        ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
      },
    });
  } else {
    client = new Redis(url, { lazyConnect: true, connectTimeout: 5_000 });
  }
  // Errors reach the spool's steps; unheard, ioredis would print each reconnection's.
  client.on('error', () => {});
  const close = async () => {
    await within(2_000, 'quit', client.quit()).catch(() => client.disconnect());
  };
  try {
    await within(
      10_000,
      'Redis',
      client.connect().then(() => client.ping()),
    );
  } catch (error) {
    client.disconnect();
    throw error;
  }
  const masters = cluster
    ? () =>
        (client as InstanceType<typeof Cluster>)
          .nodes('master')
          .map((node) => (args: string[]) => node.call(args[0] as string, ...args.slice(1)))
    : undefined;
  return { client, close, masters };
}

/** The node-redis client (or cluster) of the URL, connected, or the error that kept it from it. */
async function nodeRedis(module: NodeRedisModule, url: string, cluster: boolean): Promise<Connected> {
  const client = cluster
    ? module.createCluster({ rootNodes: [{ url }] })
    : module.createClient({ url, socket: { connectTimeout: 5_000 } });
  client.on('error', () => {});
  const close = async () => {
    await within(2_000, 'close', client.close()).catch(() => client.destroy());
  };
  try {
    await within(10_000, 'Redis', client.connect() as Promise<unknown>);
  } catch (error) {
    client.destroy();
    throw error;
  }
  return { client, close };
}

/** What `stream` holds: entries waiting (acknowledged ones are deleted) and the oldest one's age. */
async function streamBacklog(redis: CommandRunner, stream: string): Promise<Backlog> {
  if ((await redis.send(['TYPE', stream], stream)) !== 'stream') return { present: false };
  const waiting = Number(await redis.send(['XLEN', stream], stream));
  const first = (await redis.send(['XRANGE', stream, '-', '+', 'COUNT', '1'], stream)) as [string][];
  // An entry's id starts with the Redis clock's ms when it was added.
  const at = Number(String(first[0]?.[0] ?? '').split('-')[0]);
  const time = (await redis.send(['TIME'], stream)) as [string, string];
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  return { present: true, waiting, oldestMs: first.length && at > 0 ? Math.max(0, now - at) : undefined };
}

/**
 * The default streams of other services beside `stream`, by SCAN on each node `nodes` sends to
 * (the one Redis, or every master of a cluster).
 */
async function otherStreams(
  redis: CommandRunner,
  stream: string,
  nodes: ((args: string[]) => Promise<unknown>)[],
): Promise<OtherSpool[]> {
  const names = new Set<string>();
  for (const send of nodes) {
    let cursor = '0';
    do {
      const reply = (await send([
        'SCAN',
        cursor,
        'MATCH',
        `${DEFAULT_STREAM}*`,
        'COUNT',
        '1000',
        'TYPE',
        'stream',
      ])) as [string, string[]];
      cursor = String(reply[0]);
      for (const key of reply[1].map(String)) if (isDefaultStream(key) && key !== stream) names.add(key);
    } while (cursor !== '0');
  }
  const out: OtherSpool[] = [];
  for (const name of [...names].sort()) {
    const { waiting = 0, oldestMs } = await streamBacklog(redis, name);
    out.push({ name, waiting, oldestMs });
  }
  return out;
}

/**
 * `--redis <url>` (`--cluster`: a node of a Redis Cluster): ioredis when installed, else
 * node-redis (`redis`), connected, and the `redisSpool` on it: on `--stream`, else on the default
 * stream of `options.service`. A bad `--stream`, no driver or a Redis out of reach is a
 * {@link CliFailure} (exit 2).
 */
export async function redisTarget(
  flags: Extract<SpoolFlags, { kind: 'redis' }>,
  options: TargetOptions,
): Promise<SpoolTarget> {
  const stream = flags.stream ?? (options.service ? serviceStream(options.service) : DEFAULT_STREAM);
  const where = redactUrl(flags.url);
  const io = await optionalImport<IoRedisModule>('ioredis', () => import('ioredis'));
  const node = io ? undefined : await optionalImport<NodeRedisModule>('redis', () => import('redis'));
  if (!io && !node) throw missingDriver('--redis', 'the ioredis or the redis package', 'ioredis');
  let connected: Connected;
  try {
    connected = io
      ? await ioredis(io, flags.url, flags.cluster)
      : await nodeRedis(node as NodeRedisModule, flags.url, flags.cluster);
  } catch (error) {
    throw new CliFailure(`cannot reach Redis at ${where}: ${messageOf(error)}`);
  }
  let spool: ReturnType<typeof redisSpool>;
  try {
    spool = redisSpool(connected.client as Parameters<typeof redisSpool>[0], {
      stream,
      consumer: flags.consumer,
    });
  } catch (error) {
    await connected.close();
    throw new CliFailure(messageOf(error));
  }
  const redis = adaptClient('billing-sdk', connected.client);
  return {
    label: `Redis stream ${stream} at ${where}`,
    spool,
    backlog: () => streamBacklog(redis, stream),
    others: async () => {
      if (!flags.cluster) return otherStreams(redis, stream, [(args) => redis.send(args, stream)]);
      // SCAN walks one node: on a cluster, each master's keys are listed by that master.
      const masters = connected.masters?.();
      return masters?.length ? otherStreams(redis, stream, masters) : undefined;
    },
    close: () => connected.close(),
  };
}
